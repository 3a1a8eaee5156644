import type { SeededRandom } from "../random.js";
import { secondsToMicros } from "../time.js";
import type { ModelContext } from "./context.js";
import { liveEndpoints, type BranchState, type EndpointState, type ProjectState } from "./state.js";

/**
 * The control plane's availability checker (seed 2.2): every interval, a `check_availability`
 * operation for each branch of a project that has a compute endpoint (branches without one
 * are not checked). Each project gets a random phase so that checks do not all land on the
 * same instant.
 */
export class AvailabilityChecker {
  private readonly intervalUs: number;

  constructor(
    private readonly ctx: ModelContext,
    intervalSeconds: number,
    private readonly random: SeededRandom,
  ) {
    this.intervalUs = secondsToMicros(intervalSeconds);
  }

  get enabled(): boolean {
    return this.intervalUs > 0;
  }

  watch(project: ProjectState): void {
    if (!this.enabled || !project.availabilityChecks) return;
    const phase = Math.floor(this.random.next() * this.intervalUs);
    this.ctx.scheduler.after(phase + 1, () => {
      this.check(project);
    });
  }

  private check(project: ProjectState): void {
    if (project.deleted) return; // checks end with the project
    // One check per branch, attributed to its read-write endpoint when it has one.
    const perBranch = new Map<BranchState, EndpointState>();
    for (const endpoint of liveEndpoints(project)) {
      const seen = perBranch.get(endpoint.branch);
      if (seen === undefined || (seen.type !== "read_write" && endpoint.type === "read_write")) {
        perBranch.set(endpoint.branch, endpoint);
      }
    }
    for (const [branch, endpoint] of perBranch) {
      this.ctx.runner.start(project, { branch, endpoint, action: "check_availability" });
    }
    this.ctx.scheduler.after(this.intervalUs, () => {
      this.check(project);
    });
  }
}
