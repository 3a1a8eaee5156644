/**
 * A test simulator for the tests of a file or of a `describe` block: started in a before hook
 * (before all of them, or before each one with `each`) together with what the tests build on
 * it, and closed in the matching after hook. `use` receives both, to set the variables the
 * tests read:
 *
 *   let sim: TestSimulator;
 *   let projectId: string;
 *   simulatorWithProject((s) => ({ sim, projectId } = s));
 */
import { afterAll, afterEach, beforeAll, beforeEach } from "vitest";
import type { SimulatorOptions } from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "./simulator.js";

export interface SimulatorSuiteOptions {
  /** A new simulator for each test (default: one for all of them). */
  readonly each?: boolean;
  /** Passed to `startTestSimulator`. */
  readonly simulator?: Partial<SimulatorOptions>;
}

/** What `use` receives: the simulator (under both names the tests use) and what was built. */
export type WithSimulator<F> = F & { readonly t: TestSimulator; readonly sim: TestSimulator };

/**
 * Starts the simulator, then `build` on it; closes what `close` names, then the simulator.
 * The hooks are registered where this is called.
 */
export function simulatorSuite<F extends object>(
  build: (t: TestSimulator) => Promise<F> | F,
  use: (fixture: WithSimulator<F>) => void,
  options: SimulatorSuiteOptions & { readonly close?: (fixture: F) => Promise<void> } = {},
): void {
  let fixture: WithSimulator<F> | undefined;
  const before = options.each === true ? beforeEach : beforeAll;
  const after = options.each === true ? afterEach : afterAll;
  before(async () => {
    const t = await startTestSimulator(options.simulator);
    fixture = { ...(await build(t)), t, sim: t };
    use(fixture);
  });
  after(async () => {
    if (fixture === undefined) return;
    await options.close?.(fixture);
    await fixture.t.close();
  });
}

export interface SimProjectIds {
  readonly projectId: string;
  /** The first branch's id, and every branch's. */
  readonly branchId: string;
  readonly branchIds: string[];
}

export interface WithProjectOptions extends SimulatorSuiteOptions {
  /** Default paid. */
  readonly plan?: "free" | "paid";
  /** The project's branches (default: the simulator's). */
  readonly branches?: number;
  /** Simulated seconds to move the clock on after the project is created (default 0). */
  readonly advance?: number;
}

/** `simulatorSuite` with one project created in it. */
export function simulatorWithProject(
  use: (fixture: WithSimulator<SimProjectIds>) => void,
  options: WithProjectOptions = {},
): void {
  const build = async (t: TestSimulator): Promise<SimProjectIds> => {
    const created = await t.sim.createProject({
      plan: options.plan ?? "paid",
      ...(options.branches === undefined ? {} : { branches: options.branches }),
    });
    if ((options.advance ?? 0) > 0) await t.sim.advance(options.advance ?? 0);
    const branchIds = created.branches.map((b) => b.id);
    return { projectId: created.project.id, branchId: branchIds[0] ?? "", branchIds };
  };
  simulatorSuite(build, use, options);
}
