/**
 * The `accounts` setting as an operator writes it: several API keys, each named by its
 * environment variable, with its projects and organisations; the single-key settings as one
 * account; and the problems each mistake gets, by path, never with a key's value.
 */
import { describe, expect, it } from "vitest";
import { fileWith, problemsOf } from "./support/files.js";
import {
  ConfigError,
  accountPlans,
  loadConfig,
  planReload,
  readSecretFiles,
  resolveAccounts,
} from "../../src/config/index.js";

const TWO_ACCOUNTS = `
api:
  requestsPerMinute: 500
accounts:
  - name: platform
    keyEnv: KEY_PLATFORM
    orgs: [org-platform-11111111, org-shared-22222222]
  - name: data
    keyEnv: KEY_DATA
    url: https://eu.example.test/api/v2
    requestsPerMinute: 120
    concurrency: 2
    projects: all
  - name: legacy
    keyEnv: KEY_LEGACY
    projects: [legacy-project-1]
`;

describe("accounts", () => {
  it("gives each account its key, address, limits and projects; the rest from api", async () => {
    const config = await loadConfig({ file: await fileWith(TWO_ACCOUNTS), env: {} });
    const env = { KEY_PLATFORM: "k-platform", KEY_DATA: "k-data", KEY_LEGACY: "k-legacy" };
    const accounts = resolveAccounts(config, env);
    expect(accounts).toEqual([
      {
        name: "platform",
        keyVariable: "KEY_PLATFORM",
        key: "k-platform",
        url: "https://console.neon.tech/api/v2",
        requestsPerMinute: 500,
        burstPerSecond: 40,
        concurrency: 8,
        projects: { ids: [], all: false, orgs: ["org-platform-11111111", "org-shared-22222222"] },
      },
      {
        name: "data",
        keyVariable: "KEY_DATA",
        key: "k-data",
        url: "https://eu.example.test/api/v2",
        requestsPerMinute: 120,
        burstPerSecond: 40,
        concurrency: 2,
        projects: { ids: [], all: true, orgs: [] },
      },
      {
        name: "legacy",
        keyVariable: "KEY_LEGACY",
        key: "k-legacy",
        url: "https://console.neon.tech/api/v2",
        requestsPerMinute: 500,
        burstPerSecond: 40,
        concurrency: 8,
        projects: { ids: ["legacy-project-1"], all: false, orgs: [] },
      },
    ]);
    // No PGCP_API_KEY and no top-level projects are needed with accounts.
    expect(config.api.key).toBeUndefined();
    expect(config.projects).toBeUndefined();
  });

  it("makes one account, named default, of the single-key settings", async () => {
    const config = await loadConfig({ env: { PGCP_API_KEY: "k", PGCP_PROJECTS: "all" } });
    expect(resolveAccounts(config, {})).toEqual([
      expect.objectContaining({
        name: "default",
        key: "k",
        projects: { ids: [], all: true, orgs: [] },
      }),
    ]);
  });

  it("reads a key from <keyEnv>_FILE, as mounted secrets are", async () => {
    const config = await loadConfig({ file: await fileWith(TWO_ACCOUNTS), env: {} });
    const keyFile = await fileWith("k-from-file\n");
    const env = readSecretFiles({ KEY_PLATFORM_FILE: keyFile, KEY_DATA: "d", KEY_LEGACY: "l" }, [
      "KEY_PLATFORM",
      "KEY_DATA",
      "KEY_LEGACY",
    ]);
    expect(resolveAccounts(config, env)[0]?.key).toBe("k-from-file");
  });

  it("names each unset or blank key variable, never a value", async () => {
    const config = await loadConfig({ file: await fileWith(TWO_ACCOUNTS), env: {} });
    let error: unknown;
    try {
      resolveAccounts(config, { KEY_PLATFORM: "", KEY_DATA: "has blanks-SECRET x" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).problems).toEqual([
      "accounts[0].keyEnv: environment variable KEY_PLATFORM is not set",
      "accounts[1].keyEnv: KEY_DATA holds blanks (a key has none)",
      "accounts[2].keyEnv: environment variable KEY_LEGACY is not set",
    ]);
    expect((error as Error).message).not.toContain("SECRET");
  });

  it("refuses a key written in the file, saying where it belongs", async () => {
    const file = await fileWith(
      "accounts:\n  - name: a\n    keyEnv: KEY_A\n    key: napi-written-here\n    projects: all\n",
    );
    const problems = await problemsOf(loadConfig({ file, env: { KEY_A: "k" } }));
    expect(problems).toEqual([
      "accounts[0].key: a secret is not read from the file: name an environment variable in keyEnv",
    ]);
  });

  it("lists the problems of accounts by path", async () => {
    const file = await fileWith(`
projects: [p-1]
poll:
  interval: 0
accounts:
  - name: a
    keyEnv: KEY_A
  - name: b
    keyEnv: lower_case
    orgs: [not-an-org]
  - name: "has space"
    keyEnv: KEY_C
    projects: all
`);
    const problems = await problemsOf(loadConfig({ file, env: {} }));
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^poll\.interval: must be greater than zero/),
        expect.stringMatching(/^accounts\[0\]: watches nothing: give projects/),
        expect.stringMatching(/^accounts\[1\]\.keyEnv: must be an environment variable name/),
        expect.stringMatching(/^accounts\[1\]\.orgs\[0\]: not an organisation id/),
        expect.stringMatching(/^accounts\[2\]\.name: must be 1 to 64 letters/),
        expect.stringMatching(/^projects: is set with accounts: list each account's projects/),
      ]),
    );
    const duplicate = await fileWith(`
accounts:
  - { name: a, keyEnv: KEY_A, projects: all }
  - { name: a, keyEnv: KEY_B, projects: all }
`);
    expect(await problemsOf(loadConfig({ file: duplicate, env: {} }))).toEqual([
      "accounts: account names must be unique (from the file " + duplicate + ")",
    ]);
  });

  it("still asks for the key and the projects without accounts", async () => {
    const problems = await problemsOf(loadConfig({ env: {} }));
    expect(problems).toEqual([
      "api.key: is required (set PGCP_API_KEY)",
      "projects: is required: a list of project ids, or all (set PGCP_PROJECTS or --projects), or accounts",
    ]);
  });

  it("keeps the accounts (and so the projects) until a restart when a reload changes them", async () => {
    const running = await loadConfig({ file: await fileWith(TWO_ACCOUNTS), env: {} });
    const single = await loadConfig({ env: { PGCP_API_KEY: "k", PGCP_PROJECTS: "p-1" } });
    const plan = planReload(running, single);
    expect(plan.restartNeeded).toContain("accounts");
    expect(accountPlans(plan.config).map((a) => a.name)).toEqual(["platform", "data", "legacy"]);
    // Without accounts, the projects stay live as before.
    const other = await loadConfig({ env: { PGCP_API_KEY: "k", PGCP_PROJECTS: "p-2,p-3" } });
    expect(planReload(single, other).config.projects).toEqual(["p-2", "p-3"]);
  });
});
