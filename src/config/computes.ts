/**
 * How each account's computes are probed, with the role's name and password from the
 * environment and the CA certificates read from `caFile`: `computes`, with each account's
 * overrides (`accounts[].computes`) on top. Like the other secrets, the password never enters
 * the configuration object, and no error message repeats it.
 */
import { readFileSync } from "node:fs";
import { accountPlans } from "./accounts.js";
import type { SslMode } from "./computes-schema.js";
import { ConfigError } from "./load.js";
import type { Config } from "./schema.js";

/** Where and as whom the probe connects to the computes of one account's projects. */
export interface ComputeConnection {
  /** The role's name. */
  readonly user: string;
  /** The role's password: a secret. */
  readonly password: string;
  readonly database: string;
  readonly port: number;
  readonly sslmode: SslMode;
  /** The CA certificates (PEM) of `verify-full`, when `caFile` names them. */
  readonly ca: string | undefined;
}

/** Each account's connection, by name; undefined for an account whose computes are not probed. */
export interface ResolvedComputes {
  readonly accounts: ReadonlyMap<string, ComputeConnection | undefined>;
}

/** No account's computes are probed. */
export const NO_COMPUTES: ResolvedComputes = { accounts: new Map() };

/** One account's settings: `computes` with the account's overrides, and where each came from. */
interface AccountSettings {
  readonly enabled: boolean;
  readonly userEnv: string;
  readonly passwordEnv: string;
  readonly database: string;
  readonly port: number;
  readonly sslmode: SslMode;
  readonly caFile: string | undefined;
  /** The path of the section a setting came from: `computes` or `accounts[i].computes`. */
  readonly from: (key: "userEnv" | "passwordEnv" | "caFile" | "sslmode") => string;
}

function accountSettings(config: Config): { name: string; settings: AccountSettings }[] {
  const top = config.computes;
  return accountPlans(config).map((plan, i) => {
    const own = config.accounts?.[i]?.computes ?? {};
    const section = `accounts[${i}].computes`;
    return {
      name: plan.name,
      settings: {
        enabled: own.enabled ?? top.enabled,
        userEnv: own.userEnv ?? top.userEnv,
        passwordEnv: own.passwordEnv ?? top.passwordEnv,
        database: own.database ?? top.database,
        port: own.port ?? top.port,
        sslmode: own.sslmode ?? top.sslmode,
        caFile: own.caFile ?? top.caFile,
        from: (key) => (own[key] === undefined ? "computes" : section),
      },
    };
  });
}

/** The variables the probe reads its role's names and passwords from (for `<NAME>_FILE`). */
export function computeVariables(config: Config): string[] {
  return accountSettings(config)
    .filter(({ settings }) => settings.enabled)
    .flatMap(({ settings }) => [settings.userEnv, settings.passwordEnv]);
}

/**
 * Each account's connection, from `env` and the CA files. A variable that is unset, or a CA
 * file that cannot be read or holds no certificate, is a configuration error naming the
 * setting and the variable or file, each said once.
 */
export function resolveComputes(
  config: Config,
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string = (path) => readFileSync(path, "utf8"),
): ResolvedComputes {
  const problems = new Set<string>();
  const accounts = new Map<string, ComputeConnection | undefined>();
  const files = new Map<string, string | undefined>();
  for (const { name, settings: s } of accountSettings(config)) {
    if (!s.enabled) {
      accounts.set(name, undefined);
      continue;
    }
    const variable = (key: "userEnv" | "passwordEnv"): string | undefined => {
      const value = env[s[key]] ?? "";
      if (value !== "") return value;
      problems.add(`${s.from(key)}.${key}: environment variable ${s[key]} is not set`);
      return undefined;
    };
    const user = variable("userEnv");
    const password = variable("passwordEnv");
    let ca: string | undefined;
    if (s.caFile !== undefined) {
      if (s.sslmode !== "verify-full") {
        problems.add(
          `${s.from("caFile")}.caFile: is read with sslmode verify-full only (sslmode is ${s.sslmode})`,
        );
      } else {
        if (!files.has(s.caFile))
          files.set(
            s.caFile,
            readCa(s.caFile, readFile, (problem) => {
              problems.add(`${s.from("caFile")}.caFile: ${problem}`);
            }),
          );
        ca = files.get(s.caFile);
      }
    }
    if (user === undefined || password === undefined) continue;
    accounts.set(name, {
      user,
      password,
      database: s.database,
      port: s.port,
      sslmode: s.sslmode,
      ca,
    });
  }
  if (problems.size > 0) throw new ConfigError("environment", [...problems]);
  return { accounts };
}

/** The certificates of a CA file, or undefined after `problem` said what is wrong with it. */
function readCa(
  path: string,
  readFile: (path: string) => string,
  problem: (text: string) => void,
): string | undefined {
  let text: string;
  try {
    text = readFile(path);
  } catch (cause) {
    problem(`cannot read ${path} (${(cause as NodeJS.ErrnoException).code ?? "error"})`);
    return undefined;
  }
  if (!text.includes("-----BEGIN CERTIFICATE-----")) {
    problem(`${path} holds no PEM certificate`);
    return undefined;
  }
  return text;
}

/** Whether any account's computes are probed. */
export function probesComputes(computes: ResolvedComputes): boolean {
  return [...computes.accounts.values()].some((c) => c !== undefined);
}

/** The passwords, for the places that show text from outside to remove them. */
export function computeSecrets(computes: ResolvedComputes): string[] {
  return [
    ...new Set(
      [...computes.accounts.values()].flatMap((c) => (c === undefined ? [] : [c.password])),
    ),
  ];
}
