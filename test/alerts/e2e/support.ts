/**
 * Harness of the end-to-end tests of alert delivery: the exporter (in-process with
 * `startExporter`, or the real CLI as a child process with `test/support/daemon-process.ts`)
 * watching a test simulator, with its Slack and webhook sinks pointed at local receivers over
 * real HTTP. Nothing of ours is mocked: the tests see only what goes over the wire, what is
 * logged, what `/metrics` serves and what is committed on disk.
 *
 * The secrets (the API key, the Slack webhook URL's token, the webhook URL's path and query, its
 * signing secret, a custom header's value) are distinctive strings, so that any test can grep
 * captured output for them.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import path from "node:path";
import { alertId } from "../../../src/alerts/rules/rules.js";
import {
  webhookPayloadSchema,
  type WebhookPayload,
} from "../../../src/alerts/sinks/webhook-payload.js";
import { startExporter, type RunningExporter } from "../../../src/exporter/index.js";
import { resolveConfig, type Config, type RawConfig } from "../../../src/config/index.js";
import type { ProjectState } from "../../../src/store/index.js";
import { captureLogger, type CapturedLogger } from "../../support/capture-logger.js";
import { expect } from "vitest";
import {
  NEVER_STUCK,
  QUICK_POLL,
  UNTHROTTLED_API,
  writeDaemonConfig,
} from "../../support/daemon-config.js";
import { CLI } from "../../support/daemon-process.js";
import { runsThen, type Steps } from "../../support/operation-steps.js";
import {
  startReceiver,
  type ReceivedRequest,
  type Receiver,
  type ResponseSpec,
} from "../../support/receiver.js";
import { startTestSimulator, type TestSimulator } from "../../support/simulator.js";
import { waitForWith } from "../../support/wait.js";

/** The secrets of the suite; `SECRET_PIECES` are the distinctive parts to look for. */
export const SECRETS = {
  apiKey: "pgcp-e2e-api-key-SECRET-7f3a91c2",
  slackPath: "/services/T0E2E/B0E2E/SLACKTOKENSECRET4b2c9d",
  hookPath: "/hooks/HOOKPATHSECRET91d0?token=HOOKQUERYSECRET5e77",
  signing: "SIGNINGSECRET-e2e-0c44aa",
  authorization: "Bearer HEADERSECRET-e2e-8a1f3b",
  /** Credentials and a token a proxy in front of the API may want in its address. */
  apiUrlUser: "URLUSERSECRET-e2e-31",
  apiUrlPassword: "URLPASSWORDSECRET-e2e-42",
  apiUrlToken: "URLTOKENSECRET-e2e-53",
} as const;

/** The simulator's API address with the credentials and token above in it. */
export function apiUrlWithSecrets(sim: TestSimulator): string {
  const url = new URL(sim.apiUrl);
  url.username = SECRETS.apiUrlUser;
  url.password = SECRETS.apiUrlPassword;
  url.search = `?token=${SECRETS.apiUrlToken}`;
  return url.href;
}

export const SECRET_PIECES: readonly string[] = [
  SECRETS.apiKey,
  "SLACKTOKENSECRET4b2c9d",
  "HOOKPATHSECRET91d0",
  "HOOKQUERYSECRET5e77",
  SECRETS.signing,
  "HEADERSECRET-e2e-8a1f3b",
  SECRETS.apiUrlUser,
  SECRETS.apiUrlPassword,
  SECRETS.apiUrlToken,
];

/** The secrets (case-insensitively) found in `text`, with where they were found. */
export function secretsIn(where: string, text: string, extra: readonly string[] = []): string[] {
  const lower = text.toLowerCase();
  return [...SECRET_PIECES, ...extra]
    .filter((s) => lower.includes(s.toLowerCase()))
    .map((s) => `${where} contains ${JSON.stringify(s)}`);
}

export const LINK_TEMPLATE =
  "https://console.example.test/projects/{project_id}/operations/{operation_id}";

/** `waitFor` (test/support/wait.ts), polling every 25 ms. */
export const waitFor = waitForWith({ intervalMs: 25 });

// --- the simulator ---------------------------------------------------------------------------

/**
 * A simulator with a manual clock that starts at the wall clock's now (the exporter compares
 * operation times with its own clock) and the suite's API key.
 */
export function startSim(): Promise<TestSimulator> {
  return startTestSimulator({ startTime: new Date(), apiKey: SECRETS.apiKey });
}

export interface SimProject {
  readonly projectId: string;
  readonly branchId: string;
  readonly endpointId: string;
}

/**
 * A paid project with one branch and its read-write endpoint, no availability checks, in
 * `region` (default: the simulator's default region).
 */
export async function createProject(sim: TestSimulator, region?: string): Promise<SimProject> {
  const created = await sim.sim.createProject({
    plan: "paid",
    availability_checks: false,
    ...(region === undefined ? {} : { region_id: region }),
  });
  return {
    projectId: created.project.id,
    branchId: created.branches[0]!.id,
    endpointId: created.endpoints[0]!.id,
  };
}

/** running, then `status` after `seconds` (with an error text). */
export function failsAfter(seconds: number, status: "failed" | "error", error: string): Steps {
  return runsThen(status, seconds, error);
}

/**
 * running, `failed` (with an error text) after `failAt` seconds, running again at `retryAt`, and
 * finished a second later.
 */
export function failsThenFinishes(failAt: number, retryAt: number, error: string): Steps {
  return [
    ...runsThen("failed", failAt, error),
    { status: "running", after_seconds: retryAt },
    { status: "finished", after_seconds: retryAt + 1 },
  ];
}

/** An `apply_config` on the project's branch that fails (as `status`) with `error` after 1 s. */
export function scriptFailure(
  sim: TestSimulator,
  project: SimProject,
  error: string,
  status: "failed" | "error" = "failed",
): ReturnType<TestSimulator["sim"]["scriptOperation"]> {
  return scriptOperation(sim, project, "apply_config", failsAfter(1, status, error));
}

/** Scripts an `action` with these `steps` on the project's branch (and endpoint, if asked). */
export function scriptOperation(
  sim: TestSimulator,
  project: SimProject,
  action: string,
  steps: Steps,
  options: { readonly onEndpoint?: boolean } = {},
): ReturnType<TestSimulator["sim"]["scriptOperation"]> {
  return sim.sim.scriptOperation({
    project_id: project.projectId,
    branch_id: project.branchId,
    ...(options.onEndpoint === true ? { endpoint_id: project.endpointId } : {}),
    action,
    steps,
  });
}

/** The alert the exporter must raise for one arrival at `failed` or `error`. */
export interface ExpectedAlert {
  readonly id: string;
  readonly projectId: string;
  readonly operationId: string;
  readonly status: string;
  readonly failuresCount: number;
}

/**
 * From the simulator's truth: one `operation_failed` alert per arrival at `failed` or `error`
 * of the operations `include` selects (each keyed by operation, status and failures count).
 */
export async function expectedFailureAlerts(
  sim: TestSimulator,
  projectId: string,
  include: (operationId: string) => boolean,
): Promise<ExpectedAlert[]> {
  const out: ExpectedAlert[] = [];
  for (const op of await sim.sim.truth(projectId)) {
    if (!include(op.id)) continue;
    for (const h of op.history) {
      if (h.status !== "failed" && h.status !== "error") continue;
      const key = { projectId, id: op.id, status: h.status, failuresCount: h.failures_count };
      out.push({
        id: alertId("operation_failed", key),
        projectId,
        operationId: op.id,
        status: h.status,
        failuresCount: h.failures_count,
      });
    }
  }
  return out;
}

// --- receivers -------------------------------------------------------------------------------

/** A receiver whose answers are chosen by `script` and remembered per request. */
export interface ScriptedReceiver {
  readonly receiver: Receiver;
  readonly url: string;
  readonly requests: readonly ReceivedRequest[];
  /** The answer given to each request, by index. */
  readonly answers: readonly ResponseSpec[];
  /**
   * The requests answered with a 2xx status (a delivery, as far as the receiver can tell).
   * A 2xx scripted with `delayMs` counts even if the client gave up before it was written:
   * script delayed answers with another status.
   */
  delivered(): ReceivedRequest[];
  /** The status given to request `index`, or "drop". */
  statusOf(index: number): number | "drop";
  close(): Promise<void>;
}

export async function startScriptedReceiver(
  script: (request: ReceivedRequest, n: number) => ResponseSpec = () => ({
    status: 200,
    body: "ok",
  }),
): Promise<ScriptedReceiver> {
  const answers: ResponseSpec[] = [];
  const receiver = await startReceiver({
    fallback: (request) => {
      const spec = script(request, request.index);
      answers[request.index] = spec;
      return spec;
    },
  });
  const statusOf = (index: number): number | "drop" => {
    const spec = answers[index];
    if (spec === undefined) throw new Error(`request ${index} has no recorded answer`);
    return "drop" in spec ? "drop" : (spec.status ?? 200);
  };
  return {
    receiver,
    url: receiver.url,
    requests: receiver.requests,
    answers,
    statusOf,
    delivered: () =>
      receiver.requests.filter((r) => {
        const status = statusOf(r.index);
        return status !== "drop" && status >= 200 && status < 300;
      }),
    close: () => receiver.close(),
  };
}

// --- what the sinks send ---------------------------------------------------------------------

/** A webhook request's body, validated against the documented schema (version 1). */
export function webhookBody(request: ReceivedRequest): WebhookPayload {
  return webhookPayloadSchema.parse(request.json);
}

/** The documented Idempotency-Key: hex SHA-256 of the sorted distinct ids joined by `\n`. */
export function expectedIdempotencyKey(ids: readonly string[]): string {
  const sorted = [...new Set(ids)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  return createHash("sha256").update(sorted.join("\n")).digest("hex");
}

export interface SlackBlockView {
  readonly type: string;
  readonly text?: { readonly type: string; readonly text: string };
  readonly elements?: readonly { readonly type: string; readonly text: string }[];
}

export interface SlackView {
  readonly text: string;
  readonly blocks: readonly SlackBlockView[];
  readonly header: string;
  /** Alerts the message says it carries (its header's count). */
  readonly count: number;
  readonly project: string;
  /** The section blocks' texts (one per shown alert). */
  readonly sections: readonly string[];
  /** Operation ids shown in the sections, in order. */
  readonly operations: readonly string[];
  readonly raw: Record<string, unknown>;
}

/** Reads a Slack incoming-webhook message as a person would: header, items, counts. */
export function slackView(request: ReceivedRequest): SlackView {
  const raw = request.json as Record<string, unknown>;
  const blocks = raw.blocks as SlackBlockView[];
  const header = blocks[0]?.type === "header" ? (blocks[0].text?.text ?? "") : "";
  const match = /(\d+) alerts? in project (\S+)/.exec(header);
  if (match === null) throw new Error(`not an alert headline: ${header}`);
  const sections = blocks.filter((b) => b.type === "section").map((b) => b.text?.text ?? "");
  const operations = sections.flatMap((s) =>
    [...s.matchAll(/operation `([^`]+)`/g)].map((m) => m[1]!),
  );
  return {
    text: typeof raw.text === "string" ? raw.text : "",
    blocks,
    header,
    count: Number(match[1]),
    project: match[2]!,
    sections,
    operations,
    raw,
  };
}

// --- the exporter in-process -----------------------------------------------------------------

/**
 * Test settings: the simulator, no client-side rate limit, one attempt per request, a poll of
 * every project at every scheduler tick (once a second), no endpoint listing, and stuck
 * thresholds far beyond any test (the simulated clock may lag the wall clock). `raw` is merged
 * over them.
 */
export function exporterSettings(
  sim: TestSimulator,
  stateDir: string,
  projects: readonly string[],
): RawConfig {
  return {
    api: {
      url: apiUrlWithSecrets(sim),
      key: sim.apiKey,
      ...UNTHROTTLED_API,
      maxAttempts: 1,
      timeout: 5,
    },
    projects: [...projects],
    state: { dir: stateDir },
    listen: "127.0.0.1:0",
    poll: { ...QUICK_POLL, jitter: 0 },
    stuck: NEVER_STUCK,
    alerts: { link: LINK_TEMPLATE },
    log: { level: "debug" },
  };
}

/** Where the real daemon's files are (see `writeAlertDaemonConfig`). */
export interface AlertDaemonFiles {
  readonly configFile: string;
  readonly stateDir: string;
}

/**
 * The configuration of the real daemon (`node dist/cli.js run`, with `spawnDaemon`) watching
 * `projects`: the simulator (its key comes from PGCP_API_KEY), one attempt per request, quick
 * polls, stuck thresholds far beyond any test, the link template, `sinks` and `incidents`;
 * `poll` is merged over the quick polls. Written in `dir` (the state in `dir/state`), once the
 * test has checked that `dist/cli.js` is built.
 */
export async function writeAlertDaemonConfig(
  dir: string,
  sim: TestSimulator,
  projects: readonly SimProject[],
  settings: {
    readonly sinks: readonly unknown[];
    readonly poll?: Record<string, unknown>;
    readonly incidents?: Record<string, unknown>;
  },
): Promise<AlertDaemonFiles> {
  expect(existsSync(CLI), `${CLI} is missing: run npm run build first`).toBe(true);
  const files = { configFile: path.join(dir, "config.yaml"), stateDir: path.join(dir, "state") };
  await writeDaemonConfig(files.configFile, {
    api: { url: sim.apiUrl, ...UNTHROTTLED_API, maxAttempts: 1, timeout: 5 },
    projects: projects.map((p) => p.projectId),
    state: { dir: files.stateDir },
    poll: { ...QUICK_POLL, jitter: 0, ...settings.poll },
    stuck: NEVER_STUCK,
    alerts: { link: LINK_TEMPLATE },
    sinks: settings.sinks,
    ...(settings.incidents === undefined ? {} : { incidents: settings.incidents }),
  });
  return files;
}

/** The environment holding the sinks' secrets, for receivers at these base URLs. */
export function sinkEnvironment(slackUrl: string, hookUrl: string): Record<string, string> {
  return {
    PGCP_SLACK_WEBHOOK_URL: `${slackUrl}${SECRETS.slackPath}`,
    PGCP_WEBHOOK_URL: `${hookUrl}${SECRETS.hookPath}`,
    PGCP_WEBHOOK_SECRET: SECRETS.signing,
  };
}

export interface AlertExporter {
  readonly exporter: RunningExporter;
  readonly config: Config;
  readonly logs: CapturedLogger<Record<string, unknown>>;
  /** The committed state of a project, as the daemon holds it. */
  state(projectId: string): ProjectState | undefined;
  /** `/metrics` over HTTP, after a fresh rendering. */
  metrics(): Promise<string>;
  get(pathname: string): Promise<{ status: number; text: string }>;
  stop(): Promise<void>;
}

export async function startAlertExporter(
  layers: readonly RawConfig[],
  env: Record<string, string>,
): Promise<AlertExporter> {
  const config = resolveConfig("alerts e2e", layers);
  const logs = captureLogger(config.log.level);
  const exporter = await startExporter(config, { logger: logs.logger, env });
  const get = async (pathname: string) => {
    const response = await fetch(exporter.server.url + pathname);
    return { status: response.status, text: await response.text() };
  };
  let stopped = false;
  return {
    exporter,
    config,
    logs,
    state: (id) => exporter.daemon.project(id)?.state,
    metrics: async () => {
      await exporter.metrics.refresh();
      const { status, text } = await get("/metrics");
      if (status !== 200) throw new Error(`/metrics answered ${status}`);
      return text;
    },
    get,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      await exporter.stop();
    },
  };
}

/** Waits until every project has a committed state (its first poll: no history replayed). */
export async function waitForFirstPolls(
  exporter: AlertExporter,
  projectIds: readonly string[],
): Promise<void> {
  await waitFor("the first poll of every project", () =>
    projectIds.every((id) => exporter.state(id) !== undefined),
  );
}

/**
 * Waits until `project` has committed `polls` more times (polls and acknowledgements both
 * commit; a poll commits every second): time for a late duplicate to show.
 */
export async function waitForCommits(
  exporter: AlertExporter,
  projectId: string,
  commits: number,
): Promise<void> {
  const from = exporter.state(projectId)?.sequence ?? 0;
  await waitFor(`${commits} more commits of ${projectId}`, () => {
    const now = exporter.state(projectId)?.sequence ?? 0;
    return now >= from + commits;
  });
}

/** A sample's value from an exposition (labels must all match); undefined when absent. */
export function sampleValue(
  exposition: string,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  let found: number | undefined;
  for (const line of exposition.split("\n")) {
    if (line.startsWith("#")) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)/.exec(line);
    if (match?.[1] !== name) continue;
    const have: Record<string, string> = {};
    for (const m of (match[2] ?? "").matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      have[m[1]!] = m[2]!;
    }
    if (!Object.entries(labels).every(([k, v]) => have[k] === v)) continue;
    if (found !== undefined) throw new Error(`several samples of ${name} match`);
    found = Number(match[3]);
  }
  return found;
}
