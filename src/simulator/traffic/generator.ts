import { COMPUTE_SIZES } from "../../contract/index.js";
import { ApiError } from "../errors.js";
import type { ControlPlane } from "../model/control-plane.js";
import { DEFAULT_ENDPOINT } from "../model/projects.js";
import { liveEndpoints, type EndpointState, type ProjectState } from "../model/state.js";
import type { SeededRandom } from "../random.js";
import { US_PER_SECOND } from "../time.js";
import type { ResolvedTrafficOptions } from "./options.js";
import { trafficPolicy } from "./outcomes.js";
import { ZipfChooser } from "./zipf.js";

/** Branches a generated project grows to at most. */
const MAX_BRANCHES = 8;
/** Sizes a generated resize picks from (kept small: these are busy little projects). */
const RESIZE_CHOICES = COMPUTE_SIZES.map((s) => s.cu).filter((cu) => cu <= 4);

type Activity =
  "connect" | "applyConfig" | "branch" | "startOrSuspend" | "storageConfig" | "resize";

/**
 * Mixed activity across many projects, as a Poisson process on the simulated clock: it runs
 * under either clock (under the manual one, as time is advanced). Each activity picks a
 * generated project and one of its endpoints, and does one of (by weight):
 * connect (40: wakes an idle compute, keeps an active one awake), a configuration change
 * (15: apply_config, like a role or database change), a new branch (10, with a compute
 * 70% of the time), explicit start or suspend (10; a start of a running compute is
 * `skipped`), a storage configuration change (5: apply_storage_config), a resize on a paid
 * plan (5: the restart of seed 3.2). Auto-suspends follow from inactivity by themselves.
 * With `skew`, the projects are ranked at random and picked by a Zipf-like choice of rank.
 */
export class TrafficGenerator {
  private readonly projects: ProjectState[] = [];
  private readonly activities: readonly (readonly [weight: number, Activity])[] = [
    [40, "connect"],
    [15, "applyConfig"],
    [10, "branch"],
    [10, "startOrSuspend"],
    [5, "storageConfig"],
    [5, "resize"],
  ];
  private readonly totalWeight = this.activities.reduce((sum, [w]) => sum + w, 0);
  /** Set when the traffic is skewed: picks a rank in `projects` (most active first). */
  private chooser: ZipfChooser | undefined;

  constructor(
    private readonly plane: ControlPlane,
    private readonly options: ResolvedTrafficOptions,
    private readonly random: SeededRandom,
  ) {}

  /**
   * Creates the generated projects and schedules the first activity; `adopted` projects (made
   * with `generated: true` elsewhere, e.g. in organisations) get activity too.
   */
  start(adopted: readonly ProjectState[] = []): void {
    this.plane.runner.policy = trafficPolicy(this.random, this.options);
    this.projects.push(...adopted);
    for (let i = 0; i < this.options.projects; i++) {
      this.projects.push(
        this.plane.createProject({
          plan: this.random.chance(this.options.paidShare) ? "paid" : "free",
          branches: 1 + this.random.int(3),
          generated: true,
        }),
      );
    }
    if (this.options.skew > 0) {
      this.random.shuffle(this.projects);
      this.chooser = new ZipfChooser(this.projects.length, this.options.skew);
    }
    this.scheduleNext();
  }

  /** The ids of the projects the traffic keeps busy, most active first. */
  projectsByActivity(): readonly string[] {
    return this.projects.map((p) => p.id);
  }

  private scheduleNext(): void {
    const meanGapUs = (60 / this.options.operationsPerMinute) * US_PER_SECOND;
    this.plane.scheduler.after(Math.max(1, Math.round(this.random.exponential(meanGapUs))), () => {
      this.act();
      this.scheduleNext();
    });
  }

  private act(): void {
    const project =
      this.chooser === undefined
        ? this.random.pick(this.projects)
        : this.projects[this.chooser.choose(this.random)];
    if (project === undefined) return;
    // A disabled compute refuses connections and starts: traffic leaves it alone.
    const endpoints = liveEndpoints(project).filter((e) => !e.settings.disabled);
    if (endpoints.length === 0) return;
    const endpoint = this.random.pick(endpoints);
    let roll = this.random.next() * this.totalWeight;
    for (const [weight, activity] of this.activities) {
      roll -= weight;
      if (roll < 0) {
        this.ignoringRefusals(() => {
          this.perform(activity, project, endpoint);
        });
        return;
      }
    }
  }

  private perform(activity: Activity, project: ProjectState, endpoint: EndpointState): void {
    const { lifecycle, runner } = this.plane;
    switch (activity) {
      case "connect":
        lifecycle.connect(endpoint);
        return;
      case "applyConfig":
        lifecycle.enqueue(endpoint, lifecycle.applyConfig(endpoint));
        return;
      case "branch":
        this.branch(project, endpoint);
        return;
      case "startOrSuspend":
        this.startOrSuspend(project, endpoint);
        return;
      case "storageConfig":
        runner.start(project, { branch: endpoint.branch, action: "apply_storage_config" });
        return;
      case "resize":
        this.resize(project, endpoint);
        return;
    }
  }

  private branch(project: ProjectState, endpoint: EndpointState): void {
    if (project.branches.length >= MAX_BRANCHES) this.plane.lifecycle.connect(endpoint);
    else
      this.plane.createBranch(
        project,
        this.random.chance(0.7) ? { endpoint: DEFAULT_ENDPOINT } : {},
      );
  }

  private startOrSuspend(project: ProjectState, endpoint: EndpointState): void {
    const service = this.plane.endpoints;
    if (endpoint.currentState === "active" && this.random.chance(0.5)) {
      service.suspend(project.id, endpoint.id);
    } else {
      service.start(project.id, endpoint.id);
    }
  }

  private resize(project: ProjectState, endpoint: EndpointState): void {
    if (project.plan !== "paid") return;
    const a = this.random.pick(RESIZE_CHOICES);
    const b = this.random.pick(RESIZE_CHOICES);
    this.plane.endpoints.update(project.id, endpoint.id, {
      endpoint: {
        autoscaling_limit_min_cu: Math.min(a, b),
        autoscaling_limit_max_cu: Math.max(a, b),
      },
    });
  }

  /** A generated call the API refuses (423 while the endpoint is busy) is simply dropped. */
  private ignoringRefusals(action: () => void): void {
    try {
      action();
    } catch (error) {
      if (!(error instanceof ApiError)) throw error;
    }
  }
}
