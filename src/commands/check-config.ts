/**
 * `pgcp-exporter check-config`: validates the configuration (file, environment, flags) and the
 * sinks' secrets, prints what it would run with, and with `--connect` checks the API key and
 * each project with one request. Exit codes: 0 valid (and reachable), 1 a connection check
 * failed, 2 the configuration is invalid.
 */
import { formatWall, windowState } from "../alerts/index.js";
import { createApiClient, type ApiClient } from "../api/index.js";
import { displayUrl, type Config, type SilenceConfig, type WebSecurity } from "../config/index.js";
import { CONFIG_FLAGS_HELP, loadFromArgs } from "./config-flags.js";
import type { Command } from "./command.js";

const HELP = `usage: pgcp-exporter check-config [options] [--connect]

Validates the configuration and prints a summary; every problem is listed by its path.

options:
  --connect            also check the API key and each project with one request
${CONFIG_FLAGS_HELP}`;

export const checkConfigCommand: Command = {
  name: "check-config",
  summary: "validate the configuration (and, with --connect, the API key and projects)",
  async run(argv) {
    const loaded = await loadFromArgs("check-config", HELP, argv, ["connect"]);
    if (loaded.kind === "exit") return loaded.code;
    const { config, sinks, web } = loaded;
    const out = (line: string) => process.stdout.write(line + "\n");
    out("configuration is valid");
    out(`  api:       ${displayUrl(config.api.url)}`);
    out(
      `  projects:  ${config.projects === "all" ? "all (discovered)" : config.projects.join(", ")}`,
    );
    out(`  state:     ${describeState(config)}`);
    out(`  listen:    ${config.listen} (${describeWeb(config, web)})`);
    out(
      `  sinks:     ${sinks.length === 0 ? "none (no alerts)" : sinks.map((s) => `${s.config.name} (${s.config.kind})`).join(", ")}`,
    );
    if (config.silences.length === 0) out("  silences:  none");
    else {
      out("  silences:");
      const now = Date.now();
      for (const silence of config.silences) out(`    ${describeSilence(silence, now)}`);
    }
    if (loaded.flags.connect !== true) return 0;

    const client = createApiClient({
      apiKey: config.api.key,
      baseUrl: config.api.url,
      retry: { maxAttempts: 2 },
      timeouts: { headersMs: config.api.timeout * 1000, bodyMs: config.api.timeout * 1000 },
    });
    try {
      const failures = await checkProjects(client, config, out);
      return failures === 0 ? 0 : 1;
    } finally {
      await client.close();
    }
  },
};

/** One request per project (or one project listing for `all`); returns how many failed. */
async function checkProjects(
  client: ApiClient,
  config: Config,
  out: (line: string) => void,
): Promise<number> {
  if (config.projects === "all") {
    try {
      const page = await client.listProjects({ limit: 1 });
      out(`  ok      the API key can list projects (first: ${page.projects[0]?.id ?? "none"})`);
      return 0;
    } catch (error) {
      out(`  FAILED  listing projects: ${describe(error)}`);
      return 1;
    }
  }
  let failures = 0;
  for (const projectId of config.projects) {
    try {
      await client.listOperations(projectId, { limit: 1 });
      out(`  ok      ${projectId}`);
    } catch (error) {
      failures += 1;
      out(`  FAILED  ${projectId}: ${describe(error)}`);
    }
  }
  return failures;
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

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const e = error as Error & { status?: number; requestId?: string };
  const parts = [e.message];
  if (e.status === 401) parts.push("(check PGCP_API_KEY)");
  if (e.requestId !== undefined) parts.push(`request id ${e.requestId}`);
  return parts.join(" ");
}
