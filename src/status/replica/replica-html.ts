/** The status page's section on this replica among those sharing the projects. */
import { escapeHtml, formatDuration, plural } from "../shared/html.js";
import type { ReplicaStatus } from "./replica-status.js";

/** What the replica section reads of the page's view (`StatusView`). */
export interface ReplicaPart {
  readonly replica: ReplicaStatus | undefined;
}

/**
 * This replica among those sharing the projects (Postgres state store): its id (at `full`), the
 * live replicas, what it holds of the fleet and its share, the projects no live replica holds,
 * and how old its leases are. Nothing with the file store.
 */
export function renderReplica(view: ReplicaPart, full: boolean): string {
  const r = view.replica;
  if (r === undefined) return "";
  const who = full ? `Replica <code id="replica-id">${escapeHtml(r.id)}</code>` : "This replica";
  if (r.live === undefined || r.fleet === undefined) {
    return `<section id="replica">
<h2>Replica</h2>
<p>${who} shares the projects with other replicas through Postgres leases; its first lease heartbeat has not completed yet.</p>
</section>
`;
  }
  const others = r.live - 1;
  const share = r.target === undefined ? "" : ` (its share: ${escapeHtml(r.target)})`;
  const among =
    others === 0
      ? `the only live replica`
      : `one of <b id="replica-live">${escapeHtml(r.live)}</b> live replicas`;
  const unowned = r.unowned ?? 0;
  const unownedNote =
    unowned === 0
      ? `<p id="replica-unowned">Every project has a live holder.</p>`
      : `<p id="replica-unowned" class="banner"><b>${escapeHtml(plural(unowned, "project"))}</b> of the fleet had no live holder at this replica's latest heartbeat (a lease free, or expired by the database's clock): the replicas claim ${unowned === 1 ? "it" : "them"} at their next heartbeats.</p>`;
  const stale = r.sinceRenewalMs !== undefined && r.sinceRenewalMs > r.leaseMs;
  const renewed =
    r.sinceRenewalMs === undefined
      ? "Its leases have not been renewed yet"
      : `Its leases were renewed <span id="replica-renewed"${stale ? ` class="stuck"` : ""}>${escapeHtml(formatDuration(r.sinceRenewalMs))} ago</span>`;
  const held =
    r.oldestHeldMs === undefined || r.newestHeldMs === undefined
      ? ""
      : `; it has held them for <span id="replica-held-for">${escapeHtml(formatDuration(r.oldestHeldMs))} (the oldest) to ${escapeHtml(formatDuration(r.newestHeldMs))} (the newest)</span>`;
  return `<section id="replica">
<h2>Replica</h2>
<p>${who}, ${among} sharing the projects through Postgres leases, holds <b id="replica-held">${escapeHtml(r.held)}</b> of the fleet's <b id="replica-fleet">${escapeHtml(r.fleet)}</b> projects${share}. The counts${full ? " and projects" : ""} below are its own; each replica's page shows its share.</p>
<p>${renewed} (every ${escapeHtml(formatDuration(r.heartbeatMs))}; a lease lasts ${escapeHtml(formatDuration(r.leaseMs))})${held}.</p>
${unownedNote}
</section>
`;
}
