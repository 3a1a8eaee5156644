/**
 * `pgcp-exporter simulate`: runs the control-plane simulator until SIGINT or SIGTERM.
 */
import { parseArgs } from "node:util";
import {
  DEFAULT_COMPUTE_DATABASE,
  DEFAULT_USER_ID,
  MAX_HISTORY_SECONDS,
  startSimulator,
  type ComputeHostOptions,
  type KeyOwner,
  type RunningSimulator,
  type SimulatorOptions,
} from "../simulator/index.js";
import type { Command } from "./command.js";
import { flagProblem, usageProblems } from "./usage.js";

/** The key used when neither --api-key nor PGCP_SIM_API_KEY is given (printed at start). */
export const DEMO_API_KEY = "sim-demo-key";

const USAGE = `usage: pgcp-exporter simulate [options]

Runs a simulated control plane (the API under /api/v2, the control interface under /_sim).

options:
  --port N                    port to listen on (default 0: a free port)
  --host H                    address to listen on (default 127.0.0.1)
  --seed S                    seed of ids, traffic and faults (default: random, printed)
  --api-key K                 bearer key clients must send (default: $PGCP_SIM_API_KEY,
                              else ${DEMO_API_KEY})
  --clock real|manual         real follows wall time; manual moves only through
                              POST /_sim/clock/advance (default real)
  --speed X                   real clock: simulated seconds per second (default 1)
  --traffic                   generate activity across many projects
  --projects N                projects the traffic keeps busy (implies --traffic; default 20)
  --operations-per-minute N   traffic activities per simulated minute (default 30)
  --skew S                    Zipf exponent of the traffic over its projects: 0 even
                              (default), about 1 a few projects bring most operations
  --history N                 seconds the traffic has run when the simulator starts: the
                              logs hold that span's operations (default 0; at most a week)
  --availability-checks N     seconds between availability checks, 0 for none
                              (default 600)
  --no-availability-checks    no availability checks (same as --availability-checks 0)
  --organizations N           create N organisations, each with its own key (printed)
                              and --org-projects projects; the main key's user is a
                              member of each
  --org-projects N            projects per organisation (default 2; with --traffic the
                              traffic keeps them busy too)
  --no-rate-limit             switch off the real API's 700/min, 40/s-per-route limit
  --computes URL              host the endpoints' computes on the PostgreSQL server of
                              this superuser URL: each endpoint's host is a loopback
                              address of its own, listening on the compute port (printed)
  --compute-port N            the computes' port (default 0: a free one)
  --compute-database NAME     the clients' database, created if missing (default neondb)
  --compute-role NAME         a login role for clients, created or updated; its password
                              comes from $PGCP_SIM_COMPUTE_PASSWORD
  -h, --help                  show this help`;

/** Projects per organisation created by `--organizations` unless `--org-projects` says. */
const DEFAULT_ORG_PROJECTS = 2;

/**
 * The key of the n-th organisation created by `--organizations` (printed at start). Public
 * like the demo key, and independent of the main key, which may be a secret.
 */
export function orgApiKey(n: number): string {
  return `sim-org-key-${n}`;
}

class UsageError extends Error {}

const SIMULATE_OPTIONS = {
  port: { type: "string" },
  host: { type: "string" },
  seed: { type: "string" },
  "api-key": { type: "string" },
  clock: { type: "string" },
  speed: { type: "string" },
  traffic: { type: "boolean" },
  projects: { type: "string" },
  "operations-per-minute": { type: "string" },
  skew: { type: "string" },
  history: { type: "string" },
  "availability-checks": { type: "string" },
  "no-availability-checks": { type: "boolean" },
  organizations: { type: "string" },
  "org-projects": { type: "string" },
  "no-rate-limit": { type: "boolean" },
  computes: { type: "string" },
  "compute-port": { type: "string" },
  "compute-database": { type: "string" },
  "compute-role": { type: "string" },
  help: { type: "boolean", short: "h" },
} as const;

function integerFlag(
  name: string,
  raw: string | undefined,
  min: number,
  max: number,
): number | undefined {
  if (raw === undefined) return undefined;
  const value = /^-?\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(`--${name} must be an integer from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

function numberFlag(name: string, raw: string | undefined, min: number, max: number) {
  if (raw === undefined) return undefined;
  const value = /^\d+(\.\d+)?$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= min && value <= max)) {
    throw new UsageError(`--${name} must be a number from ${min} to ${max}, got "${raw}"`);
  }
  return value;
}

/** Turns the command line (and environment) into simulator options, or throws a UsageError. */
export function parseSimulateArgs(
  argv: string[],
  env: NodeJS.ProcessEnv = process.env,
): SimulatorOptions | "help" {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: SIMULATE_OPTIONS,
    }));
  } catch (error) {
    throw new UsageError(flagProblem(error, Object.keys(SIMULATE_OPTIONS)));
  }
  if (values.help === true) return "help";
  const clock = values.clock ?? "real";
  if (clock !== "real" && clock !== "manual") {
    throw new UsageError(`--clock must be real or manual, got "${clock}"`);
  }
  const apiKey = values["api-key"] ?? env.PGCP_SIM_API_KEY ?? DEMO_API_KEY;
  if (apiKey.trim() === "") throw new UsageError("the API key must not be empty");
  const port = integerFlag("port", values.port, 0, 65_535);
  const seed = integerFlag("seed", values.seed, 0, Number.MAX_SAFE_INTEGER);
  const projects = integerFlag("projects", values.projects, 1, 100_000);
  const perMinute = integerFlag(
    "operations-per-minute",
    values["operations-per-minute"],
    1,
    1_000_000,
  );
  let checks = integerFlag("availability-checks", values["availability-checks"], 0, 604_800);
  if (values["no-availability-checks"] === true) {
    if (checks !== undefined && checks !== 0) {
      throw new UsageError("--no-availability-checks contradicts --availability-checks");
    }
    checks = 0;
  }
  const organizationCount = integerFlag("organizations", values.organizations, 1, 1000);
  const orgProjects = integerFlag("org-projects", values["org-projects"], 0, 10_000);
  if (orgProjects !== undefined && organizationCount === undefined) {
    throw new UsageError("--org-projects needs --organizations");
  }
  const speed = numberFlag("speed", values.speed, 0.001, 1000);
  if (speed !== undefined && clock === "manual") {
    throw new UsageError("--speed applies to the real clock only");
  }
  const skew = numberFlag("skew", values.skew, 0, 4);
  const history = integerFlag("history", values.history, 0, MAX_HISTORY_SECONDS);
  const computes = computeOptions(values, env);
  const traffic =
    values.traffic === true ||
    projects !== undefined ||
    perMinute !== undefined ||
    skew !== undefined ||
    history !== undefined;
  return {
    apiKey,
    clock,
    ...(organizationCount === undefined
      ? {}
      : {
          organizations: Array.from({ length: organizationCount }, (_, i) => ({
            name: `Organization ${i + 1}`,
            members: [DEFAULT_USER_ID],
            apiKeys: [orgApiKey(i + 1)],
            projects: orgProjects ?? DEFAULT_ORG_PROJECTS,
          })),
        }),
    ...(port === undefined ? {} : { port }),
    ...(values.host === undefined ? {} : { host: values.host }),
    ...(seed === undefined ? {} : { seed }),
    ...(speed === undefined ? {} : { speed }),
    ...(checks === undefined ? {} : { availabilityCheckSeconds: checks }),
    ...(values["no-rate-limit"] === true ? { rateLimit: false } : {}),
    ...(computes === undefined ? {} : { computes }),
    ...(traffic
      ? {
          traffic: {
            ...(projects === undefined ? {} : { projects }),
            ...(perMinute === undefined ? {} : { operationsPerMinute: perMinute }),
            ...(skew === undefined ? {} : { skew }),
            ...(history === undefined ? {} : { historySeconds: history }),
          },
        }
      : {}),
  };
}

/** `--computes` and the flags that go with it. */
function computeOptions(
  values: {
    readonly computes?: string | undefined;
    readonly "compute-port"?: string | undefined;
    readonly "compute-database"?: string | undefined;
    readonly "compute-role"?: string | undefined;
  },
  env: NodeJS.ProcessEnv,
): ComputeHostOptions | undefined {
  const url = values.computes;
  const port = integerFlag("compute-port", values["compute-port"], 0, 65_535);
  const database = values["compute-database"];
  const roleName = values["compute-role"];
  if (url === undefined) {
    if (port !== undefined || database !== undefined || roleName !== undefined) {
      throw new UsageError("--compute-port, --compute-database and --compute-role need --computes");
    }
    return undefined;
  }
  if (!/^postgres(ql)?:\/\//.test(url)) {
    throw new UsageError("--computes must be a postgres:// URL of a PostgreSQL server");
  }
  const password = env.PGCP_SIM_COMPUTE_PASSWORD;
  if (roleName !== undefined && (password === undefined || password === "")) {
    throw new UsageError("--compute-role needs its password in PGCP_SIM_COMPUTE_PASSWORD");
  }
  return {
    postgresUrl: url,
    ...(port === undefined ? {} : { port }),
    ...(database === undefined ? {} : { database }),
    ...(roleName === undefined || password === undefined
      ? {}
      : { role: { name: roleName, password } }),
  };
}

/**
 * The banner's lines about the hosted computes: where sessions go and how to reach an
 * endpoint (never the URL's password).
 */
export function computesBanner(port: number, options: ComputeHostOptions): string[] {
  const server = new URL(options.postgresUrl);
  const database = options.database ?? DEFAULT_COMPUTE_DATABASE;
  const user = options.role?.name ?? decodeURIComponent(server.username);
  return [
    `  computes: port ${port} of each endpoint's host (a 127.x.y.z address), forwarded to`,
    `    PostgreSQL at ${server.hostname}:${server.port === "" ? "5432" : server.port}, database ${database}; e.g.`,
    `    psql "host=<endpoint host> port=${port} dbname=${database} user=${user} sslmode=disable"`,
  ];
}

/** Closes the simulator on the first SIGINT or SIGTERM; a second one kills as usual. */
function stopOnSignals(simulator: RunningSimulator): void {
  const onInterrupt = (): void => {
    stop("SIGINT");
  };
  const onTerminate = (): void => {
    stop("SIGTERM");
  };
  const stop = (signal: NodeJS.Signals): void => {
    process.off("SIGINT", onInterrupt);
    process.off("SIGTERM", onTerminate);
    process.stderr.write(`simulator: ${signal} received, stopping\n`);
    simulator.close().catch((error: unknown) => {
      process.stderr.write(`simulator: error while stopping: ${String(error)}\n`);
      process.exitCode = 1;
    });
  };
  process.once("SIGINT", onInterrupt);
  process.once("SIGTERM", onTerminate);
}

/** Project ids a banner lists per account; more are counted. */
const LISTED_PROJECTS = 10;

/** An account as the banner shows it: its key (when public) and its projects' ids. */
export interface BannerAccount {
  /** `personal account`, `organization org-…` */
  readonly name: string;
  /** The key, or undefined when the user chose it (a secret: never echoed). */
  readonly apiKey: string | undefined;
  readonly projectIds: readonly string[];
}

/**
 * What the simulator prints when it starts: where it listens, its key, seed and clock, then
 * each account (the main key's personal one and each organisation) with its key and project
 * ids, and a first command to try: enough to write a first configuration without a request.
 */
export function simulatorBanner(
  simulator: Pick<RunningSimulator, "apiUrl" | "url" | "seed" | "clockMode">,
  accounts: readonly BannerAccount[],
  computeLines: readonly string[] = [],
): string[] {
  const [personal] = accounts;
  const firstProject = accounts.find((a) => a.projectIds.length > 0)?.projectIds[0];
  const key = personal?.apiKey ?? "<your key>";
  return [
    `simulator listening: ${simulator.apiUrl}`,
    `  api key: ${personal?.apiKey ?? "(as configured)"}`,
    `  seed:    ${simulator.seed}`,
    `  clock:   ${simulator.clockMode}`,
    `  control: ${simulator.url}/_sim`,
    ...computeLines,
    ...accounts.flatMap((account) => [
      `  ${account.name}: api key ${account.apiKey ?? "(as configured)"} (${projectCount(account)})`,
      ...(account.projectIds.length === 0 ? [] : [`    ${listedIds(account.projectIds)}`]),
    ]),
    "  try:",
    `    PGCP_API_URL=${simulator.apiUrl} PGCP_API_KEY=${key} \\`,
    `      pgcp-exporter check-config --connect --projects ${personal?.projectIds[0] ?? "all"}`,
    ...(firstProject === undefined
      ? ["  (no project yet: start with --traffic, or POST /api/v2/projects with the key)"]
      : []),
  ];
}

function projectCount(account: BannerAccount): string {
  const n = account.projectIds.length;
  return n === 0 ? "no projects yet" : `${n} project${n === 1 ? "" : "s"}`;
}

/** The first ids, and how many more (`projects: all` watches them all). */
function listedIds(ids: readonly string[]): string {
  const shown = ids.slice(0, LISTED_PROJECTS).join(", ");
  const more = ids.length - LISTED_PROJECTS;
  return more > 0 ? `${shown}, and ${more} more (projects: all watches every one)` : shown;
}

/** The accounts a started simulator holds: the main key's personal one, each organisation. */
function bannerAccounts(simulator: RunningSimulator): BannerAccount[] {
  const idsOf = (owner: KeyOwner) =>
    simulator.plane.projects.list(owner, undefined, undefined, 1_000_000).projects.map((p) => p.id);
  return [
    {
      name: "personal account",
      // A key chosen by the user is not echoed; only the public demo key is.
      apiKey: simulator.apiKey === DEMO_API_KEY ? DEMO_API_KEY : undefined,
      projectIds: idsOf({ kind: "user", userId: DEFAULT_USER_ID }),
    },
    ...simulator.organizations.map((org, i) => ({
      name: `organization ${org.id}`,
      apiKey: orgApiKey(i + 1),
      projectIds: idsOf({ kind: "org", orgId: org.id }),
    })),
  ];
}

function bannerLines(simulator: RunningSimulator, options: SimulatorOptions): string[] {
  const computeLines =
    simulator.computePort === undefined || options.computes === undefined
      ? []
      : computesBanner(simulator.computePort, options.computes);
  return simulatorBanner(simulator, bannerAccounts(simulator), computeLines);
}

export const simulateCommand: Command = {
  async run(argv) {
    let options;
    try {
      options = parseSimulateArgs(argv);
    } catch (error) {
      if (!(error instanceof UsageError)) throw error;
      process.stderr.write(usageProblems("simulate", [error.message]));
      return 2;
    }
    if (options === "help") {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    }
    const simulator = await startSimulator(options);
    stopOnSignals(simulator);
    process.stdout.write(bannerLines(simulator, options).join("\n") + "\n");
    // Keep running: the open server holds the process until a signal closes it, after which
    // the process ends on its own with exit code 0.
    return undefined;
  },
};
