/**
 * The fixture of an alert-delivery test file or `describe` block: a simulator (`startSim`), its
 * projects (`createProject`), scripted receivers by name (`startScriptedReceiver`) and a
 * temporary state directory, started in a `beforeAll` hook and closed in the matching
 * `afterAll`; with `alertExporterSuite`, also the in-process exporter watching every project,
 * started once each has had its first poll and stopped first. `use` receives the handles, to
 * set the variables the tests read:
 *
 *   let sim: TestSimulator;
 *   let hook: ScriptedReceiver;
 *   let exporter: AlertExporter;
 *   alertExporterSuite({ layers: () => [{ sinks: [...] }] }, (s) => ({ sim, hook, exporter } = s));
 */
import { afterAll, beforeAll } from "vitest";
import type { RawConfig } from "../../../src/config/index.js";
import type { ReceivedRequest, ResponseSpec } from "../../support/receiver.js";
import type { TestSimulator } from "../../support/simulator.js";
import { removeDir, tempDir } from "../../support/temp-dir.js";
import {
  createProject,
  exporterSettings,
  sinkEnvironment,
  startAlertExporter,
  startScriptedReceiver,
  startSim,
  waitForFirstPolls,
  type AlertExporter,
  type ScriptedReceiver,
  type SimProject,
} from "./support.js";

/** How a scripted receiver answers its `n`th request. */
export type ReceiverScript = (request: ReceivedRequest, n: number) => ResponseSpec;

export interface AlertSuiteOptions<R extends string> {
  /** The scripted receivers to start, by name (default: `slack` and `hook`). */
  readonly receivers?: readonly R[];
  /** Their scripts, by name (default: every request answered 200 `ok`). */
  readonly scripts?: Partial<Record<NoInfer<R>, ReceiverScript>>;
  /** How many projects to create (default 1). */
  readonly projects?: number;
  /** The prefix of the temporary state directory's name (default `pgcp-alerts-e2e-`). */
  readonly tempPrefix?: string;
}

/** What `use` receives: the receivers under their names, and the rest. */
export type AlertSuite<R extends string> = Readonly<Record<R, ScriptedReceiver>> & {
  readonly sim: TestSimulator;
  /** The first project, and every one. */
  readonly project: SimProject;
  readonly projects: SimProject[];
  readonly stateDir: string;
};

export interface AlertExporterSuiteOptions<R extends string> extends AlertSuiteOptions<R> {
  /** The layers over `exporterSettings` for every project: the sinks, at least. */
  readonly layers: (suite: AlertSuite<R>) => readonly RawConfig[];
  /**
   * The exporter's environment (default: `sinkEnvironment` for the receivers named `slack` and
   * `hook`).
   */
  readonly env?: (suite: AlertSuite<R>) => Record<string, string>;
}

export type AlertExporterSuite<R extends string> = AlertSuite<R> & {
  readonly exporter: AlertExporter;
};

/** The simulator, projects, receivers and state directory; see the module's comment. */
export function alertSuite<R extends string = "slack" | "hook">(
  options: AlertSuiteOptions<R>,
  use: (suite: AlertSuite<R>) => void,
): void {
  registerSuite(options, () => Promise.resolve({}), use);
}

/** `alertSuite` with the in-process exporter; see the module's comment. */
export function alertExporterSuite<R extends string = "slack" | "hook">(
  options: AlertExporterSuiteOptions<R>,
  use: (suite: AlertExporterSuite<R>) => void,
): void {
  registerSuite(
    options,
    async (suite, closers) => {
      const ids = suite.projects.map((p) => p.projectId);
      const exporter = await startAlertExporter(
        [exporterSettings(suite.sim, suite.stateDir, ids), ...options.layers(suite)],
        options.env?.(suite) ?? defaultEnvironment(suite),
      );
      closers.unshift(() => exporter.stop());
      await waitForFirstPolls(exporter, ids);
      return { exporter };
    },
    use,
  );
}

/** The Slack and webhook variables for receivers named `slack` and `hook`, if there are. */
function defaultEnvironment(suite: object): Record<string, string> {
  const { slack, hook } = suite as Partial<Record<string, ScriptedReceiver>>;
  return slack === undefined || hook === undefined ? {} : sinkEnvironment(slack.url, hook.url);
}

/**
 * Registers the hooks: `before` builds the suite, then `more` on it; `after` runs the closers
 * `more` put first one by one, then the others together.
 */
function registerSuite<R extends string, M extends object>(
  options: AlertSuiteOptions<R>,
  more: (suite: AlertSuite<R>, closers: (() => Promise<void>)[]) => Promise<M>,
  use: (suite: AlertSuite<R> & M) => void,
): void {
  let first: (() => Promise<void>)[] = [];
  let rest: (() => Promise<void>)[] = [];
  beforeAll(async () => {
    const suite = await startSuite(options, rest);
    use({ ...suite, ...(await more(suite, first)) });
  });
  afterAll(async () => {
    const [now, later] = [first, rest];
    [first, rest] = [[], []];
    for (const close of now) await close();
    await Promise.all(later.map((close) => close()));
  });
}

async function startSuite<R extends string>(
  options: AlertSuiteOptions<R>,
  closers: (() => Promise<void>)[],
): Promise<AlertSuite<R>> {
  const sim = await startSim();
  closers.push(() => sim.close());
  const receivers: Partial<Record<R, ScriptedReceiver>> = {};
  for (const name of options.receivers ?? (["slack", "hook"] as R[])) {
    const receiver = await startScriptedReceiver(options.scripts?.[name]);
    closers.push(() => receiver.close());
    receivers[name] = receiver;
  }
  const stateDir = await tempDir(options.tempPrefix ?? "pgcp-alerts-e2e-");
  closers.push(() => removeDir(stateDir));
  const projects: SimProject[] = [];
  for (let i = 0; i < (options.projects ?? 1); i++) projects.push(await createProject(sim));
  return {
    ...(receivers as Record<R, ScriptedReceiver>),
    sim,
    project: projects[0]!,
    projects,
    stateDir,
  };
}
