/**
 * The accounts the exporter watches, each with its API key from the environment: the
 * `accounts` list, or the one account the single-key settings (`api.key`, `projects`) make.
 * Like the sinks' secrets, the keys never enter the configuration object, and no error message
 * repeats one.
 */
import { DEFAULT_ACCOUNT } from "./accounts-schema.js";
import { ConfigError } from "./load.js";
import type { Config } from "./schema.js";

/** What an account watches: project ids, its own projects (`all`), and organisations. */
export interface AccountProjects {
  /** Project ids listed by hand. */
  readonly ids: readonly string[];
  /** Every project of the key's own account (`projects: all`), discovered. */
  readonly all: boolean;
  /** Organisations whose projects are all watched, discovered. */
  readonly orgs: readonly string[];
}

/** An account as the daemon runs it: where, how fast, and what it watches. */
export interface AccountPlan {
  readonly name: string;
  /** The environment variable its key comes from (named in errors, never its value). */
  readonly keyVariable: string;
  readonly url: string;
  readonly requestsPerMinute: number;
  readonly burstPerSecond: number;
  readonly concurrency: number;
  readonly projects: AccountProjects;
}

/** An account with its API key (a secret). */
export interface ResolvedAccount extends AccountPlan {
  readonly key: string;
}

/** The accounts of a configuration, without their keys, in the configuration's order. */
export function accountPlans(config: Config): AccountPlan[] {
  const { api } = config;
  if (config.accounts === undefined) {
    const projects = config.projects ?? [];
    return [
      {
        name: DEFAULT_ACCOUNT,
        keyVariable: "PGCP_API_KEY",
        url: api.url,
        requestsPerMinute: api.requestsPerMinute,
        burstPerSecond: api.burstPerSecond,
        concurrency: api.concurrency,
        projects: projectsOf(projects, undefined),
      },
    ];
  }
  return config.accounts.map((account) => ({
    name: account.name,
    keyVariable: account.keyEnv,
    url: account.url ?? api.url,
    requestsPerMinute: account.requestsPerMinute ?? api.requestsPerMinute,
    burstPerSecond: account.burstPerSecond ?? api.burstPerSecond,
    concurrency: account.concurrency ?? api.concurrency,
    projects: projectsOf(account.projects, account.orgs),
  }));
}

function projectsOf(
  projects: "all" | readonly string[] | undefined,
  orgs: readonly string[] | undefined,
): AccountProjects {
  return {
    ids: projects === "all" || projects === undefined ? [] : [...projects],
    all: projects === "all",
    orgs: [...(orgs ?? [])],
  };
}

/** Whether an account's projects are (partly) found by listing: `all` or organisations. */
export function isDiscovered(projects: AccountProjects): boolean {
  return projects.all || projects.orgs.length > 0;
}

/** The variables the accounts read their keys from (for `<NAME>_FILE`). */
export function accountVariables(config: Config): string[] {
  return (config.accounts ?? []).map((a) => a.keyEnv);
}

/**
 * Each account with its key: `api.key` for the single-key settings, else the variable each
 * account names. A variable that is unset or holds blanks is a configuration error.
 */
export function resolveAccounts(config: Config, env: NodeJS.ProcessEnv): ResolvedAccount[] {
  const plans = accountPlans(config);
  if (config.accounts === undefined) {
    const key = config.api.key;
    if (key === undefined) throw new ConfigError("environment", ["api.key: is required"]);
    return plans.map((plan) => ({ ...plan, key }));
  }
  const problems: string[] = [];
  const resolved: ResolvedAccount[] = [];
  config.accounts.forEach((account, i) => {
    const key = env[account.keyEnv] ?? "";
    const plan = plans[i];
    if (key === "") {
      problems.push(`accounts[${i}].keyEnv: environment variable ${account.keyEnv} is not set`);
    } else if (!/^\S+$/.test(key)) {
      problems.push(`accounts[${i}].keyEnv: ${account.keyEnv} holds blanks (a key has none)`);
    } else if (plan !== undefined) resolved.push({ ...plan, key });
  });
  if (problems.length > 0) throw new ConfigError("environment", problems);
  return resolved;
}
