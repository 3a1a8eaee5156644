/**
 * `pgcp-exporter demo`: the whole thing with no account. Starts a simulator with live traffic
 * (failures included) in a personal account and two organisations, the exporter against it
 * with two accounts (a member's personal key that also watches one organisation, and the
 * other organisation's own key), and a local webhook receiver that prints the
 * alerts in the terminal; prints where to look, a short summary every so often, and stops
 * cleanly on Ctrl-C. The exporter's log goes to a file (the terminal gets its warnings and
 * errors only). State goes to a temporary directory, so every demo starts afresh.
 */
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import {
  ConfigError,
  displayUrl,
  fromEnvironment,
  OTLP_HEADER_VARIABLES,
  resolveConfig,
  resolveOtlp,
  type Config,
  type ResolvedOtlp,
} from "../config/index.js";
import {
  DEFAULT_USER_ID,
  startSimulator,
  type ComputeHostOptions,
  type Organization,
  type RunningSimulator,
} from "../simulator/index.js";
import { demoPostgres, demoRole, startDemoClient, type DemoPostgres } from "./demo-computes.js";
import { createSplitLogger } from "../logger.js";
import { startAlertPrinter } from "./alert-printer.js";
import { DemoTally, terminalLogStream } from "./demo-terminal.js";
import { startExporter } from "../exporter/index.js";
import type { Command } from "./command.js";
import { flagProblem, usageProblems } from "./usage.js";
import { systemClock } from "../clock.js";

const HELP = `usage: pgcp-exporter demo [options]

Runs a simulated control plane with live traffic and the exporter against it.

options:
  --listen ADDR     address of the exporter's HTTP server (env PGCP_LISTEN; default
                    127.0.0.1:9642)
  --projects N      simulated personal projects (default 5), plus 2 in each of two
                    organisations
  --seed S          seed of the simulated traffic (default 1)
  --log-level L     level of the exporter's log file (default info)
  --log-file FILE   the exporter's log (default: exporter.log in the demo's temporary folder,
                    removed when the demo stops); the terminal shows its warnings and errors
  --summary-every S seconds between two summaries in the terminal (default 30; 0: none)
  --postgres-url URL
                    a PostgreSQL server (a superuser's URL) to host the simulated computes on,
                    for the compute probe (env PGCP_DEMO_POSTGRES_URL; default: a throwaway
                    server when PostgreSQL's server is installed)
  --no-computes     no computes: the compute probe stays off`;

const DEMO_KEY = "demo-key";
/** The database the simulated computes serve, as the service's default. */
const DEMO_DATABASE = "neondb";
/** The second organisation's own key (an org key: it sees that organisation's projects). */
const DEMO_ORG_KEY = "demo-globex-key";
/** Projects in each of the demo's two organisations. */
const ORG_PROJECTS = 2;

const DEMO_OPTIONS = {
  listen: { type: "string" },
  projects: { type: "string" },
  seed: { type: "string" },
  "log-level": { type: "string" },
  "log-file": { type: "string" },
  "summary-every": { type: "string" },
  "postgres-url": { type: "string" },
  "no-computes": { type: "boolean" },
  help: { type: "boolean", short: "h" },
} as const;

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

/** The demo's flags, checked. */
interface DemoFlags {
  readonly values: ReturnType<typeof parseDemoArgs>["values"];
  readonly projects: number;
  readonly seed: number;
  readonly summaryEvery: number;
}

function parseDemoArgs(argv: string[]) {
  return parseArgs({ args: argv, strict: true, options: DEMO_OPTIONS });
}

/** The flags, or the exit code after the help or a problem was printed. */
function demoFlags(argv: string[]): DemoFlags | number {
  let values;
  try {
    ({ values } = parseDemoArgs(argv));
  } catch (error) {
    process.stderr.write(usageProblems("demo", [flagProblem(error, Object.keys(DEMO_OPTIONS))]));
    return 2;
  }
  if (values.help === true) {
    process.stdout.write(HELP + "\n");
    return 0;
  }
  const projects = Number(values.projects ?? "5");
  const seed = Number(values.seed ?? "1");
  if (!Number.isInteger(projects) || projects < 1 || projects > 1000) {
    process.stderr.write("pgcp-exporter demo: --projects must be an integer from 1 to 1000\n");
    return 2;
  }
  if (!Number.isInteger(seed) || seed < 0) {
    process.stderr.write("pgcp-exporter demo: --seed must be a non-negative integer\n");
    return 2;
  }
  const summaryEvery = Number(values["summary-every"] ?? "30");
  if (!Number.isFinite(summaryEvery) || summaryEvery < 0) {
    process.stderr.write("pgcp-exporter demo: --summary-every must be a number of seconds\n");
    return 2;
  }
  return { values, projects, seed, summaryEvery };
}

/**
 * The simulator with live traffic: the personal projects, and two organisations' projects;
 * with `computes`, their computes on that PostgreSQL server.
 */
async function startDemoSimulator(
  projects: number,
  seed: number,
  computes: ComputeHostOptions | undefined,
): Promise<{ simulator: RunningSimulator; acme: Organization; globex: Organization }> {
  const orgProjects = 2 * ORG_PROJECTS;
  const simulator = await startSimulator({
    apiKey: DEMO_KEY,
    clock: "real",
    seed,
    ...(computes === undefined ? {} : { computes }),
    // The demo key's user is a member of Acme; Globex is reached with its own key.
    organizations: [
      { name: "Acme Analytics", members: [DEFAULT_USER_ID], projects: ORG_PROJECTS },
      { name: "Globex Labs", apiKeys: [DEMO_ORG_KEY], projects: ORG_PROJECTS },
    ],
    traffic: {
      projects,
      operationsPerMinute: 20 * (projects + orgProjects),
      failureShare: 0.15,
    },
  });
  const [acme, globex] = simulator.organizations;
  if (acme === undefined || globex === undefined) {
    throw new Error("the demo's simulator has two organisations");
  }
  return { simulator, acme, globex };
}

export const demoCommand: Command = {
  async run(argv) {
    const flags = demoFlags(argv);
    if (typeof flags === "number") return flags;
    const { values, projects, summaryEvery } = flags;
    const postgres: DemoPostgres =
      values["no-computes"] === true
        ? { reason: "--no-computes" }
        : await demoPostgres(
            nonEmpty(values["postgres-url"]) ?? nonEmpty(process.env.PGCP_DEMO_POSTGRES_URL),
          );
    const role = demoRole();
    const computes =
      "url" in postgres ? { postgresUrl: postgres.url, database: DEMO_DATABASE, role } : undefined;
    let started;
    try {
      started = await startDemoSimulator(projects, flags.seed, computes);
    } catch (error) {
      if ("stop" in postgres) await postgres.stop();
      throw error;
    }
    const { simulator, acme, globex } = started;
    const stopPostgres = async () => {
      if ("stop" in postgres) await postgres.stop();
    };
    const stateDir = await mkdtemp(path.join(tmpdir(), "pgcp-demo-"));
    let config;
    try {
      config = demoConfig(simulator, acme.id, stateDir, values);
    } catch (error) {
      await simulator.close();
      await stopPostgres();
      await rm(stateDir, { recursive: true, force: true });
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`pgcp-exporter demo: ${error.message}\n`);
      return 2;
    }
    const say = (line: string) => process.stderr.write(line + "\n");
    const logFile = values["log-file"] ?? path.join(stateDir, "exporter.log");
    const logStream = createWriteStream(logFile, { flags: "a" });
    const logger = createSplitLogger(config.log.level, logStream, {
      level: "warn",
      stream: terminalLogStream(say),
    });
    const tally = new DemoTally();
    const printer = await startAlertPrinter(say, (kind) => {
      tally.alert(kind);
    });
    const closeLog = () =>
      new Promise<void>((resolve) => {
        logStream.end(resolve);
      });
    let exporter;
    try {
      exporter = await startExporter(config, {
        logger,
        observers: [tally],
        env: {
          PGCP_DEMO_KEY: DEMO_KEY,
          PGCP_DEMO_GLOBEX_KEY: DEMO_ORG_KEY,
          PGCP_WEBHOOK_URL: printer.url,
          PGCP_WEBHOOK_SECRET: printer.secret,
          PGCP_COMPUTE_USER: role.name,
          PGCP_COMPUTE_PASSWORD: role.password,
          ...otlpHeaderVariables(),
        },
      });
    } catch (error) {
      // Nothing is left behind: not the simulator, the printer, nor the state directory.
      await printer.close();
      await closeLog();
      await simulator.close();
      await stopPostgres();
      await rm(stateDir, { recursive: true, force: true });
      // A port in use says which, and how to choose another (--listen or PGCP_LISTEN).
      process.stderr.write(
        `pgcp-exporter demo: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return 1;
    }
    const client =
      computes === undefined
        ? undefined
        : startDemoClient(simulator, DEMO_KEY, role, DEMO_DATABASE);
    process.stderr.write(
      banner({
        serverUrl: exporter.server.url,
        computes: "url" in postgres ? { label: postgres.label } : { reason: postgres.reason },
        simulator,
        acme,
        globex,
        projects,
        printerUrl: printer.url,
        stateDir,
        logFile,
        summaryEvery,
        otlp: resolveOtlp(config, process.env),
      }),
    );
    let periodStart = systemClock.monotonic();
    const summarize = () => {
      say(tally.take((systemClock.monotonic() - periodStart) / 1000));
      periodStart = systemClock.monotonic();
    };
    const summaries = summaryEvery > 0 ? setInterval(summarize, summaryEvery * 1000) : undefined;

    await untilStopped();
    if (summaries !== undefined) clearInterval(summaries);
    await client?.stop();
    await exporter.stop();
    summarize();
    await printer.close();
    await simulator.close();
    await stopPostgres();
    await closeLog();
    await rm(stateDir, { recursive: true, force: true });
    process.stderr.write("demo stopped\n");
    return 0;
  },
};

/**
 * The exporter's configuration: two accounts against the simulator, short intervals; with the
 * simulator's computes, the compute probe reading them, its advice sent to the printer too.
 */
function demoConfig(
  simulator: RunningSimulator,
  acmeId: string,
  stateDir: string,
  values: DemoFlags["values"],
): Config {
  const port = simulator.computePort;
  return resolveConfig("demo", [
    {
      api: { url: simulator.apiUrl },
      accounts: [
        { name: "personal", keyEnv: "PGCP_DEMO_KEY", projects: "all", orgs: [acmeId] },
        { name: "globex", keyEnv: "PGCP_DEMO_GLOBEX_KEY", projects: "all" },
      ],
      discoveryInterval: 10,
      state: { dir: stateDir },
      listen: values.listen ?? nonEmpty(process.env.PGCP_LISTEN) ?? "127.0.0.1:9642",
      poll: { interval: 5, fastInterval: 2, endpointsInterval: 10 },
      log: { level: values["log-level"] ?? "info" },
      // OpenTelemetry's standard variables (OTEL_EXPORTER_OTLP_ENDPOINT, …) work as in `run`.
      ...otlpFromEnvironment(),
      ...(port === undefined
        ? {}
        : {
            computes: {
              enabled: true,
              port,
              database: DEMO_DATABASE,
              sslmode: "disable",
              interval: 10,
              timeout: 3,
              advice: { warmup: "1m", window: "1m" },
            },
            // The webhook of PGCP_WEBHOOK_URL, taking compute_advice too (a sink does only
            // when its match names it).
            sinks: [
              {
                name: "webhook",
                kind: "webhook",
                match: [
                  {
                    kinds: [
                      "operation_failed",
                      "operation_stuck",
                      "operation_retrying",
                      "operation_recovered",
                    ],
                  },
                  { kinds: ["compute_advice"] },
                ],
              },
            ],
          }),
    },
  ]);
}

/** The `otlp` settings OpenTelemetry's variables give, as `run` reads them; none when unset. */
function otlpFromEnvironment(): { otlp?: unknown } {
  const { otlp } = fromEnvironment(process.env);
  return otlp === undefined ? {} : { otlp };
}

/** The OTLP headers of the environment (secrets), handed on to the exporter as they are. */
function otlpHeaderVariables(): Record<string, string> {
  return Object.fromEntries(
    Object.values(OTLP_HEADER_VARIABLES).flatMap((name) => {
      const value = process.env[name];
      return value === undefined || value === "" ? [] : [[name, value]];
    }),
  );
}

/** Resolves on Ctrl-C (SIGINT) or SIGTERM. */
function untilStopped(): Promise<void> {
  return new Promise<void>((resolve) => {
    process.once("SIGINT", () => {
      resolve();
    });
    process.once("SIGTERM", () => {
      resolve();
    });
  });
}

/** Where spans and metrics go over OTLP, or how to send them to a collector. */
function otlpLines(otlp: ResolvedOtlp): string[] {
  const traces = otlp.traces?.url;
  const metrics = otlp.metrics?.url;
  if (traces === undefined && metrics === undefined) {
    return [
      "  otlp:       off; to see each operation as a span in OpenTelemetry, run an OTLP receiver",
      "              (an OpenTelemetry Collector) and start the demo with",
      "              OTEL_EXPORTER_OTLP_ENDPOINT=http://localhost:4318 (docs/opentelemetry.md)",
    ];
  }
  const where = (url: string | undefined) => (url === undefined ? "off" : displayUrl(url));
  return [`  otlp:       spans to ${where(traces)}, metrics to ${where(metrics)}`];
}

/** Where to look, printed once the demo runs. */
function banner(at: {
  readonly serverUrl: string;
  /** Where the computes the probe reads are, or why there are none. */
  readonly computes: { readonly label: string } | { readonly reason: string };
  readonly simulator: RunningSimulator;
  readonly acme: Organization;
  readonly globex: Organization;
  readonly projects: number;
  readonly printerUrl: string;
  readonly stateDir: string;
  readonly logFile: string;
  readonly summaryEvery: number;
  /** Where spans and metrics go over OTLP, if anywhere. */
  readonly otlp: ResolvedOtlp;
}): string {
  const { serverUrl, acme, globex, summaryEvery } = at;
  return (
    [
      "",
      "pgcp-exporter demo is running:",
      `  status:     ${serverUrl}/`,
      `  metrics:    ${serverUrl}/metrics`,
      `  health:     ${serverUrl}/healthz, ${serverUrl}/readyz`,
      `  simulator:  ${at.simulator.apiUrl} (API key "${DEMO_KEY}")`,
      `  accounts:   personal: key "${DEMO_KEY}", its ${at.projects} projects and ${acme.name} (${acme.id})`,
      `              globex: key "${DEMO_ORG_KEY}", ${globex.name} (${globex.id})`,
      `  alerts:     printed below as they arrive (a signed webhook to ${at.printerUrl})`,
      ...("label" in at.computes
        ? [
            `  computes:   probed on ${at.computes.label};`,
            `              a client keeps the first personal project's endpoint busy with a cache`,
            `              too small for it: the status page shows its file cache hit ratio, and`,
            `              a larger compute is advised (alert ADVICE) after about 2 minutes`,
          ]
        : [
            `  computes:   not probed: ${at.computes.reason}; install it, or pass --postgres-url`,
            `              postgres://… (a superuser's URL), to see the compute probe`,
          ]),
      ...otlpLines(at.otlp),
      `  state:      ${at.stateDir}`,
      `  log:        ${at.logFile} (every operation; warnings and errors also below)`,
      ...(summaryEvery > 0 ? [`  summary:    below, every ${summaryEvery} s`] : []),
      "Press Ctrl-C to stop.",
      "",
    ].join("\n") + "\n"
  );
}
