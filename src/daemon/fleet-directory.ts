/**
 * What the daemon reads of each watched project besides its operations, to show beside ids: its
 * name, account, organisation and region (from discovery's listing, else read once), and its
 * branches: listed at the start when their series are exported (`branchesAtStart`), else first when
 * a poll of the project raises alerts (before they are handed to the notifier, for the names in
 * them), and whenever a poll sees them change. It tells the observers (`projectDescribed`,
 * `branchesListed`).
 *
 * At most `maxBranches` branches of a project are kept: its default branch, then the oldest, so
 * that the series of long-lived branches stay while preview branches come and go past the cap;
 * the others are not shown (their alerts carry their ids alone), and a line says so once per
 * project. A branch gone from a listing is still shown for the discovery grace, as a project is.
 */
import type { ApiClient } from "../api/index.js";
import type { Clock } from "../clock.js";
import type { Branch, ProjectListItem } from "../contract/index.js";
import { errorFields, type Logger } from "../logger.js";
import type { BranchInfo, DaemonObserver, ProjectInfo } from "../sync/index.js";
import type { DescribeReason } from "../scheduler/index.js";
import { Departures } from "./departures.js";

export interface DirectoryInputs {
  readonly notify: Required<DaemonObserver>;
  readonly logger: Logger;
  readonly clock: Clock;
  /** How long a branch gone from a listing is still shown (seconds; `discoveryGrace`). */
  readonly graceSeconds: number;
  /** The most branches of a project kept (`metrics.maxBranchesPerProject`). */
  readonly maxBranches: number;
  /**
   * List every project's branches after its first poll (`pgcp_branch_info` is exported); else
   * a project's branches are read first when its alerts want their names.
   */
  readonly branchesAtStart: boolean;
}

/** One project's branches: those kept from its latest listing, and those gone since. */
interface ProjectBranches {
  kept: readonly BranchInfo[];
  readonly gone: Map<string, BranchInfo>;
  readonly departures: Departures;
}

export class FleetDirectory implements Pick<DaemonObserver, "projectsChanged"> {
  readonly #inputs: DirectoryInputs;
  #graceSeconds: number;
  /** What discovery's latest listings said of each project. */
  readonly #listed = new Map<string, ProjectListItem>();
  /** What the observers were told of each project. */
  readonly #described = new Map<string, ProjectInfo>();
  /** The names of the organisations read, by id. */
  readonly #orgNames = new Map<string, string>();
  readonly #branches = new Map<string, ProjectBranches>();
  /** Projects said to have more branches than are kept (said once each). */
  readonly #overCap = new Set<string>();
  #timer: NodeJS.Timeout | undefined;

  constructor(inputs: DirectoryInputs) {
    this.#inputs = inputs;
    this.#graceSeconds = inputs.graceSeconds;
  }

  /** A reload's discovery grace, for the branches that go from now on. */
  setGrace(seconds: number): void {
    this.#graceSeconds = seconds;
  }

  /**
   * Discovery listed these projects: a project already described whose name, organisation or
   * region changed is described again (at no cost: the listing was made anyway).
   */
  listed(items: readonly ProjectListItem[]): void {
    for (const item of items) {
      this.#listed.set(item.id, item);
      const before = this.#described.get(item.id);
      if (before === undefined) continue;
      this.#tell(item.id, infoOf(item, before.account, this.#orgName(item.org_id)));
    }
  }

  /**
   * Reads what is shown of a project: its name and organisation while unknown (from discovery's
   * listing when it has the project, else `GET /projects/{id}`), its organisation's name once,
   * and its branches when `reason` wants them (see `branchesAtStart`). Resolves to the requests
   * it made; rejects with what the API answered to the project's own calls.
   */
  async describe(
    projectId: string,
    account: string,
    client: Pick<ApiClient, "getProject" | "listBranches" | "getOrganization">,
    signal: AbortSignal,
    reason: DescribeReason,
  ): Promise<number> {
    let requests = 0;
    const known = this.#described.get(projectId);
    if (known === undefined || (known.orgId !== undefined && known.orgName === undefined)) {
      let item = this.#listed.get(projectId);
      if (item === undefined) {
        requests += 1;
        item = await client.getProject(projectId, { signal });
      }
      const orgId = item.org_id ?? undefined;
      if (orgId !== undefined && !this.#orgNames.has(orgId)) {
        requests += 1;
        await this.#readOrganization(orgId, account, client, signal);
      }
      this.#tell(projectId, infoOf(item, account, this.#orgName(orgId)));
    }
    const unread = !this.#branches.has(projectId);
    const wanted =
      reason === "branches" || (unread && (reason === "alert" || this.#inputs.branchesAtStart));
    if (wanted) {
      requests += 1;
      const branches = await client.listBranches(projectId, { signal });
      this.#branchesListed(projectId, branches);
    }
    return requests;
  }

  /** The project's branches have not been listed yet. */
  branchesUnread(projectId: string): boolean {
    return !this.#branches.has(projectId);
  }

  /** Forgets the projects no longer shown (their grace, if any, has ended). */
  projectsChanged(projectIds: readonly string[]): void {
    const shown = new Set(projectIds);
    for (const map of [this.#listed, this.#described, this.#branches]) {
      for (const id of map.keys()) if (!shown.has(id)) map.delete(id);
    }
    for (const id of this.#overCap) if (!shown.has(id)) this.#overCap.delete(id);
  }

  stop(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
  }

  /** An organisation's name, read once; a failure leaves it unknown until the next try. */
  async #readOrganization(
    orgId: string,
    account: string,
    client: Pick<ApiClient, "getOrganization">,
    signal: AbortSignal,
  ): Promise<void> {
    try {
      const org = await client.getOrganization(orgId, { signal });
      this.#orgNames.set(orgId, org.name);
    } catch (error) {
      if (signal.aborted) throw error;
      this.#inputs.logger.warn(
        { account, org: orgId, ...errorFields(error) },
        "reading an organisation's name failed; its projects show its id alone until a later try",
      );
    }
  }

  #orgName(orgId: string | null | undefined): string | undefined {
    return orgId === undefined || orgId === null ? undefined : this.#orgNames.get(orgId);
  }

  #tell(projectId: string, info: ProjectInfo): void {
    const before = this.#described.get(projectId);
    if (before !== undefined && sameInfo(before, info)) return;
    this.#described.set(projectId, info);
    this.#inputs.notify.projectDescribed(projectId, info);
  }

  #branchesListed(projectId: string, branches: readonly Branch[]): void {
    const { maxBranches, logger, clock } = this.#inputs;
    const ordered = [...branches].sort(
      (a, b) => Number(isDefault(b)) - Number(isDefault(a)) || createdOrder(a, b),
    );
    if (ordered.length > maxBranches && !this.#overCap.has(projectId)) {
      this.#overCap.add(projectId);
      logger.warn(
        { project: projectId, branches: ordered.length, kept: maxBranches },
        "a project has more branches than metrics.maxBranchesPerProject: the default and the oldest are kept, the others have no pgcp_branch_info series and their alerts carry their ids alone",
      );
    }
    const kept = ordered.slice(0, maxBranches).map(branchInfo);
    const entry = this.#branches.get(projectId) ?? {
      kept: [],
      gone: new Map<string, BranchInfo>(),
      departures: new Departures(),
    };
    const keptIds = new Set(kept.map((b) => b.id));
    const left = entry.kept.filter((b) => !keptIds.has(b.id));
    for (const b of left) entry.gone.set(b.id, b);
    entry.departures.departed(
      left.map((b) => b.id),
      clock.monotonic(),
    );
    entry.departures.returned(keptIds);
    for (const id of keptIds) entry.gone.delete(id);
    entry.kept = kept;
    this.#branches.set(projectId, entry);
    this.#publish(projectId, entry);
    this.#schedule();
  }

  /** Tells the observers the project's kept branches and those gone within the grace. */
  #publish(projectId: string, entry: ProjectBranches): void {
    const lingering = new Set(
      entry.departures.lingering(this.#inputs.clock.monotonic(), this.#graceSeconds * 1000),
    );
    for (const id of entry.gone.keys()) if (!lingering.has(id)) entry.gone.delete(id);
    this.#inputs.notify.branchesListed(projectId, [...entry.kept, ...entry.gone.values()]);
  }

  /** Wakes up when the next gone branch's grace ends, to stop showing it. */
  #schedule(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    this.#timer = undefined;
    const graceMs = this.#graceSeconds * 1000;
    let next: number | undefined;
    for (const entry of this.#branches.values()) {
      const at = entry.departures.nextExpiryMs(graceMs);
      if (at !== undefined) next = Math.min(next ?? Infinity, at);
    }
    if (next === undefined) return;
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        const now = this.#inputs.clock.monotonic();
        for (const [projectId, entry] of this.#branches) {
          const at = entry.departures.nextExpiryMs(graceMs);
          if (at !== undefined && at <= now) this.#publish(projectId, entry);
        }
        this.#schedule();
      },
      Math.max(0, next - this.#inputs.clock.monotonic()) + 10,
    );
    this.#timer.unref();
  }
}

function infoOf(item: ProjectListItem, account: string, orgName: string | undefined): ProjectInfo {
  return {
    name: item.name,
    account,
    orgId: item.org_id ?? undefined,
    orgName,
    regionId: item.region_id,
    pgVersion: item.pg_version,
  };
}

function sameInfo(a: ProjectInfo, b: ProjectInfo): boolean {
  return (
    a.name === b.name &&
    a.account === b.account &&
    a.orgId === b.orgId &&
    a.orgName === b.orgName &&
    a.regionId === b.regionId &&
    a.pgVersion === b.pgVersion
  );
}

function isDefault(branch: Branch): boolean {
  return branch.default ?? branch.primary ?? false;
}

/** Oldest first; a branch without a creation time keeps its place in the listing. */
function createdOrder(a: Branch, b: Branch): number {
  if (a.created_at === undefined || b.created_at === undefined) return 0;
  return Date.parse(a.created_at) - Date.parse(b.created_at);
}

function branchInfo(branch: Branch): BranchInfo {
  return {
    id: branch.id,
    name: branch.name,
    parentId: branch.parent_id ?? undefined,
    isDefault: isDefault(branch),
  };
}
