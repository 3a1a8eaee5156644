/**
 * `pgcp-exporter check-config`: validates the configuration (file, environment, flags) and the
 * sinks' secrets, prints what it would run with, and with `--connect` checks the Postgres state
 * store (its credentials, schema version and rights, writing nothing), the API key and each
 * project with one request. Exit codes: 0 valid (and reachable), 1 a connection check
 * failed, 2 the configuration is invalid.
 */
import { formatWall, windowState } from "../alerts/index.js";
import {
  createApiClient,
  isNotFound,
  rootAnswersNotFound,
  wrongBaseUrl,
  type ApiClient,
} from "../api/index.js";
import {
  displayUrl,
  NO_COMPUTES,
  NO_OTLP,
  type AccountProjects,
  type ComputeConnection,
  type ResolvedComputes,
  type ResolvedOtlp,
  type Config,
  type ResolvedAccount,
  type SilenceConfig,
  type WebSecurity,
} from "../config/index.js";
import { CONFIG_FLAGS_HELP, loadFromArgs } from "./config-flags.js";
import type { Command } from "./command.js";
import { systemClock } from "../clock.js";
import { createLogger } from "../logger.js";

const HELP = `usage: pgcp-exporter check-config [options] [--connect]

Validates the configuration and prints a summary; every problem is listed by its path.

options:
  --connect            also check the state store (Postgres: credentials, schema version,
                       rights), the API key and each project with one request
${CONFIG_FLAGS_HELP}`;

export const checkConfigCommand: Command = {
  async run(argv) {
    const loaded = await loadFromArgs("check-config", HELP, argv, ["connect"], {
      stateDir: true,
      metricNames: true,
    });
    if (loaded.kind === "exit") return loaded.code;
    const { config, accounts, sinks, web, computes, otlp } = loaded;
    const out = (line: string) => process.stdout.write(line + "\n");
    out("configuration is valid");
    if (config.accounts === undefined) {
      out(`  api:       ${displayUrl(config.api.url)}`);
      out(`  projects:  ${describeProjects(accounts[0]?.projects)}`);
    } else {
      out("  accounts:");
      for (const a of accounts) {
        out(`    ${a.name} (${displayUrl(a.url)}): ${describeProjects(a.projects)}`);
      }
    }
    out(`  state:     ${describeState(config)}`);
    out(`  listen:    ${config.listen} (${describeWeb(config, web)})`);
    out(
      `  sinks:     ${sinks.length === 0 ? "none (no alerts)" : sinks.map((s) => `${s.config.name} (${s.config.kind})`).join(", ")}`,
    );
    for (const line of describeComputes(config, computes ?? NO_COMPUTES)) out(line);
    out(`  otlp:      ${describeOtlp(otlp ?? NO_OTLP)}`);
    if (config.silences.length === 0) out("  silences:  none");
    else {
      out("  silences:");
      const now = systemClock.wall();
      for (const silence of config.silences) out(`    ${describeSilence(silence, now)}`);
    }
    if (loaded.flags.connect !== true) return 0;

    let failures = 0;
    if (config.state.url !== undefined) {
      failures += await checkStateStore(config, (line) => out(`  ${line}`));
    }
    for (const account of accounts) {
      const client = createApiClient({
        apiKey: account.key,
        baseUrl: account.url,
        retry: { maxAttempts: 2 },
        timeouts: { headersMs: config.api.timeout * 1000, bodyMs: config.api.timeout * 1000 },
      });
      // Lines name the account only when there are several.
      const prefix = config.accounts === undefined ? "" : `${account.name}: `;
      try {
        failures += await checkAccount(client, account, (line) => out(`  ${line}`), prefix);
      } finally {
        await client.close();
      }
    }
    return failures === 0 ? 0 : 1;
  },
};

/**
 * Connects to the Postgres store and checks, without writing, its schema's version and the
 * role's rights; returns 1 when it cannot be used.
 */
async function checkStateStore(config: Config, out: (line: string) => void): Promise<number> {
  const { storeBackendFrom } = await import("../exporter/index.js");
  const { checkPostgresStore } = await import("../store/postgres-problems.js");
  const backend = await storeBackendFrom(config, createLogger("silent"), "check-config");
  if (backend.kind !== "postgres") return 0;
  try {
    const checked = await checkPostgresStore(backend.store);
    if (checked.ok) {
      out(`ok      state store ${backend.store.location}: ${checked.summary}`);
      return 0;
    }
    out(`FAILED  state store ${checked.problem.message}`);
    return 1;
  } finally {
    await backend.store.close();
  }
}

/** `p1, p2; all (discovered); orgs org-a, org-b (discovered)`. */
function describeProjects(projects: AccountProjects | undefined): string {
  if (projects === undefined) return "none";
  const parts = [
    ...(projects.ids.length > 0 ? [projects.ids.join(", ")] : []),
    ...(projects.all ? ["all (discovered)"] : []),
    ...(projects.orgs.length > 0 ? [`orgs ${projects.orgs.join(", ")} (discovered)`] : []),
  ];
  return parts.join("; ");
}

/**
 * One request per listed project, and one project listing for `all` and for each organisation;
 * returns how many failed.
 */
async function checkAccount(
  client: ApiClient,
  account: ResolvedAccount,
  out: (line: string) => void,
  prefix: string,
): Promise<number> {
  const failures: unknown[] = [];
  const check = async (what: string, request: () => Promise<string>) => {
    try {
      out(`ok      ${prefix}${what}${await request()}`);
    } catch (error) {
      failures.push(error);
      out(`FAILED  ${prefix}${what}: ${describe(error, account.keyVariable)}`);
    }
  };
  const listing = async (orgId?: string) => {
    const page = await client.listProjects({ limit: 1, orgId });
    return ` (first: ${page.projects[0]?.id ?? "none"})`;
  };
  const { projects } = account;
  if (projects.all) await check("the API key can list projects", () => listing());
  for (const org of projects.orgs) {
    await check(`the API key can list the projects of ${org}`, () => listing(org));
  }
  for (const projectId of projects.ids) {
    await check(projectId, async () => {
      await client.listOperations(projectId, { limit: 1 });
      return "";
    });
  }
  // Not found: the projects, or the API itself (a base URL without /api/v2)?
  if (failures.some(isNotFound) && (await rootAnswersNotFound(client))) {
    const setting = prefix === "" ? "api.url or PGCP_API_URL" : "the account's url";
    out(`FAILED  ${prefix}${wrongBaseUrl(displayUrl(account.url), setting)}`);
  }
  return failures.length;
}

/** `nightly: open now, until … (window)` or when it next opens, or that it never will again. */
function describeSilence(silence: SilenceConfig, nowMs: number): string {
  const w = silence.window;
  const zone = w.kind === "recurring" ? w.timeZone : "UTC";
  const at = (ms: number) =>
    `${new Date(ms).toISOString()}${zone === "UTC" ? "" : ` (${formatWall(ms, zone)} ${zone})`}`;
  const state = windowState(w, nowMs);
  const now = state.active
    ? `open now, ${state.untilMs === undefined ? "with no end in sight (its occurrences overlap)" : `until ${at(state.untilMs)}`}`
    : state.nextMs === undefined
      ? "closed, and never opens again"
      : `closed, next opens ${at(state.nextMs)}`;
  const window =
    w.kind === "one_off"
      ? `one-off from ${w.start} to ${w.end}`
      : `cron "${w.cron}" for ${w.durationSeconds} s in ${w.timeZone}`;
  return `${silence.name}: ${now} [${window}]`;
}

/**
 * Whether computes are probed, and how: one line, or one per account when they differ. Names
 * the role, never its password.
 */
function describeComputes(config: Config, computes: ResolvedComputes): string[] {
  const described = [...computes.accounts].map(([name, c]) => [name, describeConnection(c)]);
  const distinct = new Set(described.map(([, text]) => text));
  if (distinct.size <= 1) {
    const [text = "off"] = distinct;
    return [`  computes:  ${text}${text === "off" ? "" : probeRhythm(config)}`];
  }
  return [
    `  computes:  per account${probeRhythm(config)}`,
    ...described.map(([name, text]) => `    ${name ?? ""}: ${text ?? ""}`),
  ];
}

function describeConnection(c: ComputeConnection | undefined): string {
  if (c === undefined) return "off";
  const ca = c.ca === undefined ? "" : " (CA file)";
  return `as ${c.user} to port ${c.port}, database ${c.database}, sslmode ${c.sslmode}${ca}`;
}

function probeRhythm(config: Config): string {
  return `; every ${config.computes.interval} s while others use a compute`;
}

/** How the HTTP server is reached: HTTP or HTTPS, and who must log in. */
function describeWeb(config: Config, web: WebSecurity | undefined): string {
  if (web === undefined) return "http, open to all";
  const parts = [web.tls === undefined ? "http" : "https"];
  if (web.tls !== undefined && web.tls.clientAuth !== "NoClientCert") {
    parts.push(`client certificates: ${web.tls.clientAuth}`);
  }
  if (web.users.size === 0) parts.push("open to all");
  else {
    parts.push(`basic auth for ${web.users.size} user${web.users.size === 1 ? "" : "s"}`);
    if (config.web.healthWithoutAuth) parts.push("/healthz and /readyz open");
  }
  return parts.join(", ");
}

/** Where state lives, never showing a user, password or parameter of its URL. */
function describeState(config: Config): string {
  if (config.state.url === undefined) return `${config.state.dir} (files)`;
  return `${displayUrl(config.state.url)} (Postgres, leases of ${config.state.leaseDuration} s)`;
}

/** The API's error (its message names the request id already) and what to check. */
function describe(error: unknown, keyVariable: string): string {
  if (!(error instanceof Error)) return String(error);
  const e = error as Error & { status?: number };
  return e.status === 401 ? `${e.message} (check ${keyVariable})` : e.message;
}

/** Where spans and metrics go, or `off`; the headers by name only (their values are secrets). */
function describeOtlp(otlp: ResolvedOtlp): string {
  const { traces, metrics } = otlp;
  if (traces === undefined && metrics === undefined) return "off (no endpoint set)";
  const headers = (h: Readonly<Record<string, string>>) =>
    Object.keys(h).length === 0 ? "" : `, headers ${Object.keys(h).join(", ")}`;
  return [
    traces === undefined
      ? "traces off"
      : `traces to ${displayUrl(traces.url)} (${traces.protocol}${headers(traces.headers)})`,
    metrics === undefined
      ? "metrics off"
      : `metrics to ${displayUrl(metrics.url)} every ${metrics.intervalMs / 1000}s (${metrics.protocol}${headers(metrics.headers)})`,
  ].join("; ");
}
