import type { SeededRandom } from "../random.js";
import { secondsToMicros } from "../time.js";
import type { ModelContext } from "./context.js";
import { normalDurationUs } from "./plans.js";
import { addBranch, addEndpoint, DEFAULT_ENDPOINT, DEFAULT_OWNERSHIP } from "./projects.js";
import { regionFor } from "./regions.js";
import type { PlanName, ProjectState } from "./state.js";

export interface BulkSeedOptions {
  /** Number of projects to create. */
  readonly projects: number;
  /** Finished operations per project, spread evenly over the last `spanSeconds`. */
  readonly operationsPerProject: number;
  readonly plan?: PlanName;
  /** Default one day: a big log then has many operations sharing each second. */
  readonly spanSeconds?: number;
  /** Whether the availability checker watches these projects (default false). */
  readonly availabilityChecks?: boolean;
  /** The region of every project created (default `aws-us-east-2`; an unknown one: 400). */
  readonly regionId?: string;
}

export interface BulkSeedResult {
  readonly projectIds: string[];
  readonly operations: number;
}

const DEFAULT_SPAN_SECONDS = 86_400;

/** The mix of actions of seeded history, with whether each concerns the endpoint. */
const SEEDED_ACTIONS: readonly (readonly [action: string, onEndpoint: boolean])[] = [
  ["start_compute", true],
  ["suspend_compute", true],
  ["start_compute", true],
  ["suspend_compute", true],
  ["check_availability", true],
  ["check_availability", true],
  ["apply_config", true],
  ["create_branch", false],
  ["apply_storage_config", false],
];

/**
 * Creates many projects with a finished history, fast and without scheduling anything: each
 * project gets a primary branch with an idle read-write endpoint and `operationsPerProject`
 * records (running then finished), written straight into its log. For benchmarks and scale
 * tests; the history's content is deterministic under the simulator's seed.
 */
export function seedBulk(
  ctx: ModelContext,
  random: SeededRandom,
  options: BulkSeedOptions,
  watch: (project: ProjectState) => void,
): BulkSeedResult {
  const region = regionFor(options.regionId);
  const now = ctx.scheduler.nowUs;
  const spanUs = secondsToMicros(options.spanSeconds ?? DEFAULT_SPAN_SECONDS);
  const startUs = now - spanUs;
  const count = options.operationsPerProject;
  const projectIds: string[] = [];
  for (let p = 0; p < options.projects; p++) {
    const id = ctx.ids.projectId();
    const project: ProjectState = {
      id,
      name: id,
      plan: options.plan ?? "paid",
      createdUs: startUs,
      ownerId: DEFAULT_OWNERSHIP.ownerId,
      orgId: DEFAULT_OWNERSHIP.orgId,
      region,
      pgVersion: 17,
      availabilityChecks: options.availabilityChecks ?? false,
      generated: false,
      branches: [],
      endpoints: [],
      log: ctx.world.newLog(Math.max(1, count)),
      deleted: false,
    };
    ctx.world.addProject(project);
    const branch = addBranch(ctx, project, { primary: true, name: "main", createdUs: startUs });
    const endpoint = addEndpoint(ctx, project, branch, DEFAULT_ENDPOINT, startUs);
    endpoint.currentState = "idle";
    project.log.reserve(count);
    for (let k = 0; k < count; k++) {
      const [action, onEndpoint] = random.pick(SEEDED_ACTIONS);
      const createdUs = startUs + Math.floor((k * spanUs) / count);
      const index = project.log.append({
        id: ctx.ids.uuidWords(),
        branch: branch.index,
        endpoint: onEndpoint ? endpoint.index : -1,
        action,
        status: "running",
        atUs: createdUs,
      });
      const finishedUs = Math.min(project.log.createdAt(index) + normalDurationUs(action), now);
      project.log.transition(index, "finished", finishedUs);
    }
    watch(project);
    projectIds.push(id);
  }
  return { projectIds, operations: options.projects * count };
}
