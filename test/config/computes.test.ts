/**
 * The `computes` settings as an operator writes them: off by default; the role's name and
 * password from the environment (or `<NAME>_FILE`), never from the file; each account's
 * overrides; a CA file for `verify-full`; and the problems each mistake gets, by path, never
 * with the password. A reload applies `computes` at once, `accounts[].computes` at a restart.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import {
  ConfigError,
  computeSecrets,
  computeVariables,
  loadConfig,
  planReload,
  probesComputes,
  readSecretFiles,
  resolveComputes,
  type Config,
} from "../../src/config/index.js";
import { tempDir } from "../support/temp-dir.js";
import { fileWith, problemsOf } from "./support/files.js";

const CA = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

async function configOf(yaml: string): Promise<Config> {
  return loadConfig({ file: await fileWith(yaml), env: { PGCP_API_KEY: "k" } });
}

function resolveProblems(config: Config, env: NodeJS.ProcessEnv): string[] {
  try {
    resolveComputes(config, env, () => CA);
  } catch (error) {
    if (error instanceof ConfigError) return [...error.problems];
    throw error;
  }
  return [];
}

describe("computes", () => {
  it("is off by default, and then reads no variable", async () => {
    const config = await configOf("projects: [p-1]\n");
    expect(config.computes).toMatchObject({
      enabled: false,
      userEnv: "PGCP_COMPUTE_USER",
      passwordEnv: "PGCP_COMPUTE_PASSWORD",
      database: "neondb",
      port: 5432,
      sslmode: "verify-full",
      interval: 60,
      timeout: 5,
      ignoreUsers: ["cloud_admin"],
      advice: { warmup: 300, window: 600, hitRatio: 99, connections: 0.9 },
    });
    expect(computeVariables(config)).toEqual([]);
    const resolved = resolveComputes(config, {});
    expect(probesComputes(resolved)).toBe(false);
  });

  it("connects each account as its own settings say, the rest from computes", async () => {
    const config = await configOf(`
computes:
  enabled: true
  port: 6432
  sslmode: require
accounts:
  - name: prod
    keyEnv: KEY_PROD
    projects: [p-1]
  - name: staging
    keyEnv: KEY_STAGING
    projects: [p-2]
    computes:
      userEnv: STAGING_USER
      passwordEnv: STAGING_PASSWORD
      database: app
      sslmode: verify-full
      caFile: /etc/ca.pem
  - name: legacy
    keyEnv: KEY_LEGACY
    projects: [p-3]
    computes: { enabled: false }
`);
    expect(computeVariables(config)).toEqual([
      "PGCP_COMPUTE_USER",
      "PGCP_COMPUTE_PASSWORD",
      "STAGING_USER",
      "STAGING_PASSWORD",
    ]);
    const resolved = resolveComputes(
      config,
      {
        PGCP_COMPUTE_USER: "monitor",
        PGCP_COMPUTE_PASSWORD: "pw-prod",
        STAGING_USER: "staging_monitor",
        STAGING_PASSWORD: "pw-staging",
      },
      () => CA,
    );
    expect([...resolved.accounts]).toEqual([
      [
        "prod",
        {
          user: "monitor",
          password: "pw-prod",
          database: "neondb",
          port: 6432,
          sslmode: "require",
          ca: undefined,
        },
      ],
      [
        "staging",
        {
          user: "staging_monitor",
          password: "pw-staging",
          database: "app",
          port: 6432,
          sslmode: "verify-full",
          ca: CA,
        },
      ],
      ["legacy", undefined],
    ]);
    expect(computeSecrets(resolved).sort()).toEqual(["pw-prod", "pw-staging"]);
  });

  it("names each variable that is not set, once, by the setting that names it", async () => {
    const config = await configOf(`
computes: { enabled: true }
accounts:
  - { name: a, keyEnv: KEY_A, projects: [p-1] }
  - { name: b, keyEnv: KEY_B, projects: [p-2] }
  - name: c
    keyEnv: KEY_C
    projects: [p-3]
    computes: { passwordEnv: C_PASSWORD }
`);
    expect(resolveProblems(config, { PGCP_COMPUTE_USER: "u", C_PASSWORD: "" })).toEqual([
      "computes.passwordEnv: environment variable PGCP_COMPUTE_PASSWORD is not set",
      "accounts[2].computes.passwordEnv: environment variable C_PASSWORD is not set",
    ]);
  });

  it("reads the role from <NAME>_FILE, as every secret", async () => {
    const dir = await tempDir("pgcp-computes-");
    const file = path.join(dir, "password");
    await writeFile(file, "from-a-file\n");
    const config = await configOf("projects: [p-1]\ncomputes: { enabled: true }\n");
    const env = readSecretFiles(
      { PGCP_COMPUTE_USER: "u", PGCP_COMPUTE_PASSWORD_FILE: file },
      computeVariables(config),
    );
    expect(resolveComputes(config, env).accounts.get("default")?.password).toBe("from-a-file");
  });

  it("reads the CA file of verify-full, and says what is wrong with one", async () => {
    const dir = await tempDir("pgcp-computes-");
    const good = path.join(dir, "ca.pem");
    const empty = path.join(dir, "empty.pem");
    await writeFile(good, CA);
    await writeFile(empty, "not a certificate\n");
    const env = { PGCP_COMPUTE_USER: "u", PGCP_COMPUTE_PASSWORD: "p" };
    const config = (caFile: string) =>
      configOf(`projects: [p-1]\ncomputes: { enabled: true, caFile: ${caFile} }\n`);
    expect(resolveComputes(await config(good), env).accounts.get("default")?.ca).toBe(CA);
    const problems = async (caFile: string) => {
      try {
        resolveComputes(await config(caFile), env);
        return [];
      } catch (error) {
        return (error as ConfigError).problems;
      }
    };
    expect(await problems(empty)).toEqual([`computes.caFile: ${empty} holds no PEM certificate`]);
    expect(await problems(path.join(dir, "missing.pem"))).toEqual([
      `computes.caFile: cannot read ${path.join(dir, "missing.pem")} (ENOENT)`,
    ]);
  });

  it("refuses a password in the file, a CA file without verify-full, and a probe without listings", async () => {
    const bare = (problems: readonly string[]) =>
      problems.map((p) => p.replace(/ \(from the file .*\)$/, ""));
    expect(
      bare(
        await problemsOf(
          configOf(`
projects: [p-1]
poll: { endpointsInterval: 0 }
computes:
  enabled: true
  password: hunter2
  sslmode: require
  caFile: /etc/ca.pem
  port: 70000
  advice: { hitRatio: 120 }
`),
        ),
      ),
    ).toEqual([
      "computes.password: a secret is not read from the file: name an environment variable in passwordEnv",
      "computes.port: must be at most 65535",
      "computes.advice.hitRatio: must be at most 100",
      "computes.caFile: is read with sslmode verify-full only (sslmode is require)",
      "poll.endpointsInterval: is 0, which turns the endpoint listings off: the compute probe reads only endpoints a listing says are active (give an interval, e.g. 10m)",
    ]);
    const problems = await problemsOf(
      configOf(`
accounts:
  - name: a
    keyEnv: KEY_A
    projects: [p-1]
    computes: { password: hunter2, port: 0 }
`),
    );
    expect(problems).toContain(
      "accounts[0].computes.password: a secret is not read from the file: name an environment variable in passwordEnv",
    );
    expect(problems.join("\n")).not.toContain("hunter2");
  });

  it("reloads computes at once, and an account's own settings with the accounts at a restart", async () => {
    const running = await configOf("projects: [p-1]\n");
    const next = await configOf("projects: [p-1]\ncomputes: { enabled: true, interval: 30s }\n");
    const plan = planReload(running, next);
    expect(plan.config.computes).toEqual(next.computes);
    expect(plan.restartNeeded).toEqual([]);

    const accounts = (computes: string) =>
      configOf(`accounts:\n  - { name: a, keyEnv: K, projects: [p-1]${computes} }\n`);
    const withAccount = planReload(await accounts(""), await accounts(", computes: { port: 1 }"));
    expect(withAccount.restartNeeded).toEqual(["accounts"]);
  });
});
