/**
 * The status page's platform incidents, first on the page: at `full` a banner each, at
 * `summary` how many are open.
 */
import { escapeHtml, named, plural, timeAgo } from "../shared/html.js";
import type { IncidentView } from "./open-incidents.js";

/** What the incidents' banners read of the page's view (`StatusView`). */
export interface IncidentsPart {
  readonly generatedAtMs: number;
  readonly incidents: readonly IncidentView[];
  readonly incidentsOpen: number;
}

/**
 * The open platform incidents: at `full` a banner each (the oldest, capped) with its action,
 * region, error class, times, failures and first projects; at `summary` how many are open.
 */
export function renderIncidents(view: IncidentsPart, full: boolean): string {
  const open = view.incidentsOpen;
  if (open === 0) return "";
  if (!full) {
    return `<p class="banner incidents" id="incident-count">${escapeHtml(plural(open, "platform incident"))} open</p>\n`;
  }
  const banners = view.incidents.map((i) => renderIncident(i, view.generatedAtMs)).join("\n");
  const more = open - view.incidents.length;
  const note =
    more > 0
      ? `<p class="note" id="incidents-more">and ${escapeHtml(more)} more open; <a href="metrics">/metrics</a> counts them all in <code>pgcp_incidents_active</code>.</p>\n`
      : "";
  return `<section id="incidents">
<h2>Platform incidents</h2>
${banners}
${note}</section>
`;
}

function renderIncident(i: IncidentView, nowMs: number): string {
  const projects = i.projects
    .map((p) => named(p.name, p.id, "project-name", "project-id"))
    .join(", ");
  const more = i.projectCount - i.projects.length;
  return `<div class="banner incident" data-incident="${escapeHtml(i.id)}">
<p><b>Platform incident</b>: <span class="action">${escapeHtml(i.action)}</span> failing in the region <span class="region">${escapeHtml(i.regionId)}</span> across ${escapeHtml(plural(i.projectCount, "project"))}, ${escapeHtml(plural(i.failures, "failure"))} since ${timeAgo(i.firstAtMs, nowMs)}; the latest at ${timeAgo(i.lastAtMs, nowMs)}.</p>
<p>Error: <span class="error error-class">${escapeHtml(i.errorClass)}</span></p>
<p class="incident-projects">Projects: ${projects}${more > 0 ? ` <span class="muted">and ${escapeHtml(more)} more</span>` : ""}</p>
</div>`;
}
