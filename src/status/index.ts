/**
 * The status page at `/`: what only it remembers of the daemon's reports (`tracker.ts`), the
 * bounded view model built from that and the shared project views (`view.ts`), the pure HTML
 * renderer (`render.ts`), and the route with its secrets kept out (`status-page.ts`).
 */
export * from "./status-page.js";
export * from "./tracker.js";
export * from "./render.js";
export * from "./view.js";
