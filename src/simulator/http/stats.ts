/** Status recorded for a request whose connection was dropped without an answer. */
export const DROPPED = "dropped";

export interface StatsView {
  readonly total: number;
  /** Per route name, per status (or "dropped"), the number of requests. */
  readonly routes: Record<string, Record<string, number>>;
}

/** Request counts per API route and status: what request-cost tests measure. */
export class RequestStats {
  private routes = new Map<string, Map<string, number>>();
  private total = 0;

  record(route: string, status: number | typeof DROPPED): void {
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
    return { total: this.total, routes };
  }

  reset(): void {
    this.routes = new Map();
    this.total = 0;
  }
}
