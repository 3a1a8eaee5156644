/** Status recorded for a request whose connection was dropped without an answer. */
export const DROPPED = "dropped";

export interface StatsView {
  readonly total: number;
  /** Per route name, per status (or "dropped"), the number of requests. */
  readonly routes: Record<string, Record<string, number>>;
  /**
   * The longest any project went without its operations log being read (a 2xx answer to a
   * list of its operations), in wall-clock seconds since the counts were last reset, the
   * time since its last read included; over the projects read at least once, ever.
   */
  readonly longestUnreadSeconds: number;
  /** The same, per project: the longest each went without its operations log being read. */
  readonly unreadSecondsByProject: Record<string, number>;
  /** The projects whose operations were read since the counts were last reset. */
  readonly projectsRead: number;
}

/** The route whose answers count as a read of a project's operations log. */
const OPERATIONS_READ_ROUTE = "listOperations";

/** Request counts per API route and status: what request-cost tests measure. */
export class RequestStats {
  private routes = new Map<string, Map<string, number>>();
  private total = 0;
  private sinceMs: number;
  /** Per project: when its operations were last read, and its longest gap in this window. */
  private readonly reads = new Map<string, { lastMs: number; longestMs: number }>();

  constructor(private readonly nowMs: () => number = () => performance.now()) {
    this.sinceMs = nowMs();
  }

  record(route: string, status: number | typeof DROPPED, projectId?: string): void {
    if (
      projectId !== undefined &&
      route === OPERATIONS_READ_ROUTE &&
      typeof status === "number" &&
      status >= 200 &&
      status < 300
    ) {
      this.read(projectId);
    }
    let perStatus = this.routes.get(route);
    if (perStatus === undefined) {
      perStatus = new Map();
      this.routes.set(route, perStatus);
    }
    const key = String(status);
    perStatus.set(key, (perStatus.get(key) ?? 0) + 1);
    this.total++;
  }

  view(): StatsView {
    const routes: Record<string, Record<string, number>> = {};
    for (const [route, perStatus] of this.routes) routes[route] = Object.fromEntries(perStatus);
    const now = this.nowMs();
    let longestMs = 0;
    let projectsRead = 0;
    const unreadSecondsByProject: Record<string, number> = {};
    for (const [projectId, read] of this.reads) {
      const last = Math.max(read.lastMs, this.sinceMs);
      const unreadMs = Math.max(read.longestMs, now - last);
      unreadSecondsByProject[projectId] = unreadMs / 1000;
      longestMs = Math.max(longestMs, unreadMs);
      if (read.lastMs >= this.sinceMs) projectsRead += 1;
    }
    return {
      total: this.total,
      routes,
      longestUnreadSeconds: longestMs / 1000,
      unreadSecondsByProject,
      projectsRead,
    };
  }

  reset(): void {
    this.routes = new Map();
    this.total = 0;
    this.sinceMs = this.nowMs();
    for (const read of this.reads.values()) read.longestMs = 0;
  }

  private read(projectId: string): void {
    const now = this.nowMs();
    const read = this.reads.get(projectId);
    if (read === undefined) {
      this.reads.set(projectId, { lastMs: now, longestMs: 0 });
      return;
    }
    read.longestMs = Math.max(read.longestMs, now - Math.max(read.lastMs, this.sinceMs));
    read.lastMs = now;
  }
}
