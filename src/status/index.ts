/**
 * The status page at `/`. At the top: the route with its secrets kept out (`status-page.ts`),
 * what only the page remembers of the daemon's reports (`tracker.ts`), the bounded view model
 * put together from the shared project views and the tracker (`status-view.ts`), and the pure
 * HTML renderer of the whole page (`status-html.ts`). Each subject has a room holding the part of
 * the view it builds and the sections it renders (`*-html.ts`); a room imports only those before
 * it:
 *
 * - `shared/`: the limits, what the view reads of each project, free text from outside made
 *   safe to show, a bounded newest-first list, and the HTML basics (escaping, times, names);
 * - `accounts/`: each account's row, and the banners of its refused key, wrong base URL or
 *   failed discovery;
 * - `alerts/`: the outbox (each sink's pending alerts and dead letters, the most recent dead
 *   letters) and the silences (configured, and the alerts they kept recently);
 * - `incidents/`: the open platform incidents, first on the page;
 * - `replica/`: this replica among those sharing the projects (Postgres state store);
 * - `projects/`: the filter by account and organisation, the one pass that tallies and ranks the
 *   shown projects, their rows (open operations, failures, computes) and the summary counts.
 */
export { statusView, type StatusView, type StatusViewOptions } from "./status-view.js";
export { REFRESH_SECONDS, renderStatusPage } from "./status-html.js";
export * from "./status-page.js";
export * from "./tracker.js";
export type { AccountSource, AccountStatus } from "./accounts/account-status.js";
export type { DeadLetterView, SinkStatus } from "./alerts/outbox-status.js";
export type { SilencedRow, SilencedView, SilenceStatus } from "./alerts/silence-status.js";
export type { IncidentView } from "./incidents/open-incidents.js";
export type { ComputeStatus } from "./projects/compute-status.js";
export type { FilterStatus, OrganisationChoice, StatusFilter } from "./projects/filter.js";
export type { OpenOperationView } from "./projects/open-operations.js";
export {
  PROJECT_HEALTHS,
  type FailureView,
  type ProjectHealth,
  type StatusProject,
  type TrackedProject,
} from "./projects/project-rows.js";
export type { StatusCounts } from "./projects/project-tally.js";
export type { ReplicaSource, ReplicaStatus } from "./replica/replica-status.js";
export { escapeHtml, formatDuration, formatTime } from "./shared/html.js";
export { STATUS_LIMITS, type StatusLimits } from "./shared/limits.js";
export type { StatusSource } from "./shared/source.js";
export { messageOf } from "./shared/text.js";
