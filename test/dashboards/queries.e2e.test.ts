/**
 * End to end: every query of every panel of the shipped dashboards, run by a real Prometheus
 * (Debian's `prometheus` package: fails under CI when missing, skipped elsewhere) against the
 * exporter, returns data.
 *
 * The history is one that gives every family the dashboards query a series: the simulator's
 * traffic (failures, retries, cancellations, slow operations, cold starts and auto-suspends) on
 * six personal projects, counted by a backfill and then live while Prometheus scrapes every
 * second, watched under one account; a named project of an organisation under a second (the
 * organisation's key); under a third (another organisation's key) a project listed by id that
 * the API does not know (never read: no info series, no name); one project whose state file is
 * corrupt (blocked); an operation that never ends (stuck: the simulated clock runs two hours
 * behind the exporter's); injected 503s (API retries) and a 429
 * (a rate-limiter pause); a request budget small enough that the scheduler stretches its
 * intervals and requests queue at the limiter; and three alert sinks on a local receiver, one
 * that acknowledges, one that fails (pending alerts, a full outbox, dropped alerts) and one that
 * refuses for good (dead letters).
 *
 * Grafana's variables are replaced: the account, organisation, region and project variables by
 * what "All" sends, their queries resolved against the same Prometheus as Grafana resolves them
 * (`support/variables.ts`); `$__rate_interval`, `$__interval` by `1m`, `$__range` by `1h`. The
 * variables are also checked chosen: each lists what the ones before it allow, and a panel then
 * shows only those projects, each by its name.
 *
 * The same data also runs the expressions of the alerting rules (config/prometheus/alerts.yml),
 * whose unit tests (test/rules) use hand-written series: here they meet the real ones.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startReceiver, type Receiver } from "../support/receiver.js";
import type { TestSimulator } from "../support/simulator.js";
import { addApiFaults, startTrafficSimulator } from "../e2e/support/traffic-simulator.js";
import { findBinary, requireBinary } from "../e2e/support/binaries.js";
import {
  scrape,
  startTestExporter,
  tempDir,
  waitFor,
  type TestExporter,
} from "../e2e/support/exporter.js";
import { startPrometheus, type RunningPrometheus, type Series } from "../e2e/support/prometheus.js";
import { COMPUTE_PANELS, REPLICA_PANELS } from "../../tools/dashboards/index.js";
import {
  loadDashboards,
  panelQueries,
  queryVariables,
  substitute,
  type PanelQuery,
  type Substitutions,
} from "./support/dashboards.js";
import {
  resolveVariables,
  type Choice,
  type VariableOption,
  type VariableSource,
} from "./support/variables.js";
import { RULES_JOB, loadAlertRules } from "../rules/support.js";

const TRAFFIC_PROJECTS = 6;
const JOB = "pgcp";
const INTERVALS = { rateInterval: "1m", interval: "1m", range: "1h" };
/** The second account: an organisation's key, watching the organisation's one named project. */
const ORG = { name: "Acme Analytics", key: "pgcp-e2e-acme-key", project: "Tenant Acme" };
/**
 * The third account: another organisation's key, watching a project listed by id that the API
 * does not know (deleted, or a typo): never read, so it has no info series and no name.
 */
const LISTED = {
  name: "Globex Labs",
  key: "pgcp-e2e-globex-key",
  project: "vanished-pond-12345678",
};
const ACCOUNTS = { personal: "personal", org: "acme", listed: "globex" } as const;
/** The variables the dashboards share (both have the same). */
const VARIABLES = queryVariables(loadDashboards()[0]!.json);
/**
 * Every query but those of the compute probe's panels and the replicas' panels, which have data
 * only with computes on a real PostgreSQL, or with the Postgres state store: the tests of
 * test/pg run those.
 */
const ELSEWHERE: readonly string[] = [...COMPUTE_PANELS, ...REPLICA_PANELS];
const QUERIES: PanelQuery[] = loadDashboards()
  .flatMap(({ json }) => panelQueries(json))
  .filter((q) => !ELSEWHERE.includes(q.panel));
const name = (q: PanelQuery) => `${q.dashboard} / ${q.panel} / ${q.refId}`;

const prometheusBinary = findBinary("prometheus");

let t: TestSimulator | undefined;
let receiver: Receiver | undefined;
let exporter: TestExporter | undefined;
let prometheus: RunningPrometheus | undefined;
let state: { dir: string; remove(): Promise<void> } | undefined;
/** The answers to the last round of queries, by query. */
let answers = new Map<PanelQuery, Series[]>();
/** What the variables set to "All" put in the queries, in the last round. */
let substitutions: Substitutions = INTERVALS;
/** The projects: the traffic's, the organisation's named one, and the one never read. */
let ids: { traffic: string[]; unread: string; named: string; orgId: string; region: string };

/** The sinks and how the receiver answers each (by the first path segment). */
const SINKS = {
  ok: { status: 200, body: "ok" },
  flaky: { status: 500, body: "try again" },
  refusing: { status: 400, body: "no" },
} as const;

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms);
  });

/** Data: at least one series, and one whose value is a number (a quantile of nothing is NaN). */
function hasData(series: readonly Series[]): boolean {
  return series.some((s) => s.value !== undefined && s.value[1] !== "NaN");
}

/** Prometheus as Grafana asks it for a variable's options. */
const variableSource: VariableSource = {
  async labelValues(label, selector) {
    const params = new URLSearchParams({ "match[]": selector });
    const response = await fetch(
      `${prometheus!.url}/api/v1/label/${label}/values?${params.toString()}`,
    );
    const body = (await response.json()) as { status: string; data: string[] };
    if (body.status !== "success") throw new Error(`label values of ${label}: ${body.status}`);
    return body.data;
  },
  query: (expr) => prometheus!.query(expr),
};

/** The variables' options with `choices` (the others "All"), and what they put in the queries. */
async function fleet(choices: Readonly<Record<string, Choice>> = {}) {
  const { options, values } = await resolveVariables(variableSource, VARIABLES, choices);
  const of = (name: string): VariableOption[] => options.get(name) ?? [];
  return { of, substitutions: { ...INTERVALS, fleet: values } };
}

/** `panel`'s query `refId` of `dashboard`. */
function panelQuery(dashboard: string, panel: string, refId = "A"): PanelQuery {
  const q = QUERIES.find(
    (x) => x.dashboard === dashboard && x.panel === panel && x.refId === refId,
  );
  if (q === undefined) throw new Error(`no query ${refId} of ${dashboard} / ${panel}`);
  return q;
}

/** Runs every query once, the variables set to "All"; the ones that returned no data. */
async function queriesWithoutData(): Promise<PanelQuery[]> {
  substitutions = (await fleet()).substitutions;
  const next = new Map<PanelQuery, Series[]>();
  for (const q of QUERIES) {
    next.set(q, await prometheus!.query(substitute(q.expr, substitutions)));
  }
  answers = next;
  return QUERIES.filter((q) => !hasData(next.get(q) ?? []));
}

/** Whether every project but the one the API does not know is read (so named) in Prometheus. */
async function everyProjectRead(): Promise<boolean> {
  const info = await prometheus!.query("pgcp_project_info");
  return info.length === TRAFFIC_PROJECTS + 1;
}

beforeAll(async () => {
  if (prometheusBinary === undefined) return;
  receiver = await startReceiver({
    fallback: (request) => {
      const sink = request.path.split("/")[1] ?? "";
      return sink in SINKS ? SINKS[sink as keyof typeof SINKS] : { status: 404 };
    },
  });
  // An hour of history for the backfill: endpoints created, started, suspended.
  t = await startTrafficSimulator({
    projects: TRAFFIC_PROJECTS,
    operationsPerMinute: 30,
    failureShare: 0.2,
  });
  const { sim } = t;

  const projects = (await t.api<{ projects: { id: string }[] }>("GET", "/projects?limit=400")).body
    .projects;
  expect(projects).toHaveLength(TRAFFIC_PROJECTS);
  const [blocked, stuck] = projects;
  // Two organisations with their own keys; a project of the first with a name that is not its id.
  const [org, other] = [
    await sim.createOrganization({ name: ORG.name }),
    await sim.createOrganization({ name: LISTED.name }),
  ];
  await sim.createApiKey({ key: ORG.key, org: org.id });
  await sim.createApiKey({ key: LISTED.key, org: other.id });
  const named = await t.api<{ project: { id: string; region_id: string } }>("POST", "/projects", {
    apiKey: ORG.key,
    body: { project: { name: ORG.project } },
  });
  expect(named.status).toBe(201);
  ids = {
    traffic: projects.map((p) => p.id),
    unread: LISTED.project,
    named: named.body.project.id,
    orgId: org.id,
    region: named.body.project.region_id,
  };
  const endpoints = await t.api<{ endpoints: { id: string; branch_id: string }[] }>(
    "GET",
    `/projects/${stuck!.id}/endpoints`,
  );
  const branchId = endpoints.body.endpoints[0]?.branch_id;
  expect(branchId, "the branch of the stuck project's endpoint").toBeDefined();
  // Never ends within the test: open, and stuck from the first poll on.
  await sim.scriptOperation({
    project_id: stuck!.id,
    branch_id: branchId!,
    action: "apply_storage_config",
    steps: [
      { status: "running", after_seconds: 0 },
      { status: "finished", after_seconds: 30 * 86_400 },
    ],
  });
  // API retries (503s) and a pause of the shared limiter (a 429).
  await addApiFaults(t, 3);

  state = await tempDir("pgcp-dashboards-e2e-");
  await writeFile(path.join(state.dir, `${blocked!.id}.state.json`), "{ not json");
  const env: NodeJS.ProcessEnv = {
    PGCP_E2E_PERSONAL_KEY: t.apiKey,
    PGCP_E2E_ACME_KEY: ORG.key,
    PGCP_E2E_GLOBEX_KEY: LISTED.key,
  };
  for (const sink of Object.keys(SINKS)) {
    env[`PGCP_E2E_${sink.toUpperCase()}_URL`] = `${receiver.url}/${sink}/hook`;
  }
  exporter = await startTestExporter(
    t,
    {
      accounts: [
        { name: ACCOUNTS.personal, keyEnv: "PGCP_E2E_PERSONAL_KEY", projects: "all" },
        { name: ACCOUNTS.org, keyEnv: "PGCP_E2E_ACME_KEY", orgs: [ids.orgId] },
        { name: ACCOUNTS.listed, keyEnv: "PGCP_E2E_GLOBEX_KEY", projects: [ids.unread] },
      ],
      state: { dir: state.dir },
      // Each account's budget below what polling its projects every second needs: intervals
      // stretch and requests queue at the limiter.
      api: { requestsPerMinute: 300, burstPerSecond: 3, maxAttempts: 3 },
      poll: { interval: 1, fastInterval: 1, endpointsInterval: 1, backfill: "2h" },
      stuck: { default: 300, actions: { start_compute: 30 } },
      alerts: { outboxLimit: 5 },
      // The default level, stated: the dashboards and the alert rules must work with it.
      metrics: { detail: "standard" },
      sinks: Object.keys(SINKS).map((sink) => ({
        name: sink,
        kind: "webhook",
        urlEnv: `PGCP_E2E_${sink.toUpperCase()}_URL`,
        groupWindow: 0,
        timeout: 2,
      })),
    },
    env,
  );
  await waitFor("the exporter's first polls", async () =>
    (await scrape(exporter!.url)).includes("pgcp_project_up{") ? true : undefined,
  );
  prometheus = await startPrometheus(prometheusBinary, {
    targets: [`127.0.0.1:${exporter.port}`],
    job: JOB,
    scrapeIntervalSeconds: 1,
  });

  // Live traffic while Prometheus scrapes, until every query has an answer and every project
  // that can be is read.
  let empty: PanelQuery[] = QUERIES;
  let read = false;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    await sim.advance(20);
    await sleep(500);
    empty = await queriesWithoutData();
    read = await everyProjectRead();
    if (empty.length === 0 && read) break;
  }
  if (empty.length > 0 || !read) {
    console.error(
      `still without data: ${empty.map(name).join("; ")}; every project read: ${String(read)}\nexporter logs:\n${exporter.logs.slice(-20).join("\n")}`,
    );
  }
}, 60_000);

afterAll(async () => {
  await prometheus?.stop();
  await exporter?.stop();
  await receiver?.close();
  await t?.close();
  await state?.remove();
});

describe("the dashboards' variables through Prometheus", () => {
  const byValue = (options: readonly VariableOption[]) =>
    [...options].sort((a, b) => a.value.localeCompare(b.value));

  it("list every account, organisation, region and watched project, names beside ids", async (ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const { of } = await fleet();
    // The unknown project's account is not known: it was never read.
    expect(of("account").map((o) => o.value)).toEqual([ACCOUNTS.org, ACCOUNTS.personal]);
    expect(of("org")).toEqual([{ text: ORG.name, value: ids.orgId }]);
    expect(of("region").map((o) => o.value)).toEqual([ids.region]);
    const projects = of("project");
    expect(projects.map((o) => o.value).sort()).toEqual(
      [...ids.traffic, ids.named, ids.unread].sort(),
    );
    expect(projects.find((o) => o.value === ids.named)?.text).toBe(ORG.project);
    // The unknown project was never read: listed by its id, whatever the filters say.
    expect(projects.find((o) => o.value === ids.unread)?.text).toBe(ids.unread);
  });

  it("are chained: each lists what the ones before it allow", async (ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const org = await fleet({ account: [ACCOUNTS.org] });
    expect(org.of("org")).toEqual([{ text: ORG.name, value: ids.orgId }]);
    expect(org.of("region").map((o) => o.value)).toEqual([ids.region]);
    expect(byValue(org.of("project"))).toEqual(
      byValue([
        { text: ORG.project, value: ids.named },
        { text: ids.unread, value: ids.unread },
      ]),
    );
    // The personal account's projects belong to no organisation.
    const personal = await fleet({ account: [ACCOUNTS.personal] });
    expect(personal.of("org")).toEqual([]);
    expect(
      personal
        .of("project")
        .map((o) => o.value)
        .sort(),
    ).toEqual([...ids.traffic, ids.unread].sort());
    // An organisation chosen, whatever the account.
    const byOrg = await fleet({ org: [ids.orgId] });
    expect(
      byOrg
        .of("project")
        .map((o) => o.value)
        .sort(),
    ).toEqual([ids.named, ids.unread].sort());
    // A region no project is in leaves only the project not read yet.
    const nowhere = await fleet({ region: ["nowhere-1"] });
    expect(nowhere.of("project").map((o) => o.value)).toEqual([ids.unread]);
  });

  it("restrict the panels to the chosen account's projects, shown by name", async (ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const polls = panelQuery("pgcp-exporter-health", "Project polls");
    const { substitutions: chosen } = await fleet({ account: [ACCOUNTS.org] });
    const series = await prometheus!.query(substitute(polls.expr, chosen));
    const names = new Map(series.map((s) => [s.metric.project, s.metric.name]));
    expect(Object.fromEntries(names)).toEqual({
      [ids.named]: ORG.project,
      [ids.unread]: ids.unread,
    });
  });
});

describe("the dashboards' name joins through Prometheus", () => {
  it("name each project of a panel by its name, and one not read yet by its id", (ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const series = answers.get(panelQuery("pgcp-exporter-health", "Project polls")) ?? [];
    const names = new Map(series.map((s) => [s.metric.project, s.metric.name]));
    expect([...names.keys()].sort()).toEqual([...ids.traffic, ids.named, ids.unread].sort());
    expect(names.get(ids.named)).toBe(ORG.project);
    expect(names.get(ids.unread)).toBe(ids.unread);
    // The traffic's projects are named after their ids by the simulator.
    for (const id of ids.traffic) expect(names.get(id)).toBe(id);
  });

  it("give the endpoints table its projects' names", (ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const rows = answers.get(panelQuery("pgcp-overview", "Endpoints", "A")) ?? [];
    const named = rows.filter((r) => r.metric.project === ids.named);
    expect(named.length).toBeGreaterThan(0);
    for (const row of named) expect(row.metric.name).toBe(ORG.project);
    expect(rows.every((r) => r.metric.name !== undefined && r.metric.name !== "")).toBe(true);
  });
});

describe("the dashboards' queries through Prometheus", () => {
  it.for(QUERIES.map((q) => [name(q), q] as const))("%s returns data", ([, q], ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const series = answers.get(q) ?? [];
    const expr = substitute(q.expr, substitutions);
    expect(series.length, expr).toBeGreaterThan(0);
    expect(hasData(series), `${expr} answered only NaN`).toBe(true);
  });
});

/**
 * The alerting rules' expressions (without their `for`) on the same data: they all run and
 * give alerts the labels their annotations use; those whose condition the history creates for
 * sure (a stuck operation, a blocked project, failures, stretched intervals) return alerts.
 */
describe("the alert rules' expressions on the same data", () => {
  const RULES = loadAlertRules();
  /** Each alert's labels besides job and instance (Prometheus drops `__name__` from alerts). */
  const LABELS: Record<string, readonly string[]> = {
    PgcpOperationsFailing: ["project", "action"],
    PgcpOperationFailureRatioHigh: ["project", "action"],
    PgcpOperationsStuck: ["project", "action"],
    PgcpExporterDown: [],
    PgcpConfigReloadFailed: [],
    PgcpAccountKeyRefused: ["account"],
    PgcpProjectPollFailing: ["project"],
    PgcpProjectStale: ["project"],
    PgcpProjectBlocked: ["project", "problem"],
    // The Postgres state store's: no series here (test/rules tests it).
    PgcpProjectsUnowned: [],
    PgcpApiErrors: [],
    PgcpApiRateLimited: [],
    PgcpPollIntervalsStretched: [],
    PgcpAlertBacklog: ["sink"],
    PgcpAlertsDeadLettered: ["sink", "reason"],
    PgcpAlertsDropped: ["project"],
    PgcpLargerComputeAdvised: ["project", "endpoint", "reason"],
    PgcpComputeProbeFailing: ["project", "endpoint"],
  };
  const HOLDING = new Set([
    "PgcpOperationsFailing",
    "PgcpOperationsStuck",
    "PgcpProjectBlocked",
    "PgcpPollIntervalsStretched",
  ]);

  it("knows the labels of every alert", () => {
    expect(Object.keys(LABELS).sort()).toEqual(RULES.map((r) => r.alert).sort());
  });

  it.for(RULES.map((r) => [r.alert, r] as const))("%s runs", async ([alert, rule], ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    // Prometheus scrapes the exporter under the job JOB here.
    const expr = rule.expr.replaceAll(`job="${RULES_JOB}"`, `job="${JOB}"`);
    const alerts = await prometheus!.query(expr);
    if (HOLDING.has(alert)) expect(alerts.length, `${alert} does not hold`).toBeGreaterThan(0);
    if (alert === "PgcpExporterDown") expect(alerts).toEqual([]);
    for (const a of alerts) {
      const names = Object.keys(a.metric).filter((l) => l !== "__name__");
      expect(names.sort()).toEqual(["instance", "job", ...(LABELS[alert] ?? [])].sort());
      expect(a.metric.job).toBe(JOB);
    }
  });
});
