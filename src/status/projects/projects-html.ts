/**
 * The status page's project table: a row a project (problems first, capped), with its health,
 * latest successful poll, open operations, recent failures, alerts and computes; each row's
 * account and organisation link to the page filtered by them.
 */
import type { AccountStatus } from "../accounts/account-status.js";
import { escapeHtml, formatDuration, named, plural, time, timeAgo } from "../shared/html.js";
import { renderComputes } from "./computes-html.js";
import { filterHref } from "./filter-html.js";
import type { FilterStatus } from "./filter.js";
import type { OpenOperationView } from "./open-operations.js";
import type { FailureView, ProjectHealth, StatusProject } from "./project-rows.js";
import type { SummaryPart } from "./summary-html.js";

/** What the project table reads of the page's view (`StatusView`). */
export interface ProjectsPart extends SummaryPart {
  readonly generatedAtMs: number;
  readonly projects: readonly StatusProject[];
  readonly projectsOmitted: number;
  readonly filter: FilterStatus | undefined;
  readonly accounts: readonly AccountStatus[];
}

const HEALTH_LABELS: Readonly<Record<ProjectHealth, string>> = {
  blocked: "blocked",
  poll_failing: "poll failing",
  catching_up: "catching up",
  waiting: "waiting for first poll",
  ok: "ok",
};

export function renderProjects(view: ProjectsPart): string {
  if (view.counts.projects === 0) {
    return `<section id="projects">
<h2>Projects</h2>
<p class="note" id="no-projects">${view.filter !== undefined ? "No watched project matches this filter." : view.replica !== undefined ? "This replica holds no project now: the other replicas hold them." : "No project is watched yet."}</p>
</section>`;
  }
  const computes = view.computesProbed;
  const rows = view.projects.map((p) => renderProject(p, view, computes)).join("\n");
  const note =
    view.projectsOmitted > 0
      ? `<p class="note" id="projects-omitted">Showing ${escapeHtml(view.projects.length)} of ${escapeHtml(view.counts.projects)} projects: blocked and failing ones first, then those with stuck operations or failures in the last hour, then the rest. The other ${escapeHtml(view.projectsOmitted)} are counted in the summary; <a href="metrics">/metrics</a> has every project.</p>`
      : "";
  return `<section id="projects">
<h2>Projects</h2>
<table>
<thead><tr><th>Project</th><th>Status</th><th>Last successful poll</th><th>Open operations</th><th>Recent failures</th><th>Alerts</th>${computes ? "<th>Computes</th>" : ""}</tr></thead>
<tbody>
${rows}
</tbody>
</table>
${note}
</section>`;
}

function healthBadge(health: ProjectHealth): string {
  const tone =
    health === "ok" ? "ok" : health === "blocked" || health === "poll_failing" ? "bad" : "warn";
  return `<span class="badge ${tone}">${escapeHtml(HEALTH_LABELS[health])}</span>`;
}

/** Where a project lives, each a link to the page filtered by it: its account, its organisation. */
function renderWhere(p: StatusProject, view: ProjectsPart): string {
  const f = view.filter;
  const parts: string[] = [];
  if (p.account !== undefined && view.accounts.length > 1) {
    parts.push(
      `account <a class="account" href="${filterHref({ account: p.account, org: f?.orgId })}">${escapeHtml(p.account)}</a>`,
    );
  }
  if (p.orgId !== undefined) {
    const label = escapeHtml(p.orgName ?? p.orgId);
    parts.push(
      `organisation <a class="org" href="${filterHref({ account: f?.account, org: p.orgId })}" data-org="${escapeHtml(p.orgId)}">${label}</a>`,
    );
  }
  return parts.length === 0 ? "" : `<div class="muted project-where">${parts.join(" · ")}</div>`;
}

function renderProject(p: StatusProject, view: ProjectsPart, computes: boolean): string {
  const nowMs = view.generatedAtMs;
  let status = healthBadge(p.health);
  if (p.blocked !== undefined) {
    status += `<div class="blocked">state file <code>${escapeHtml(p.blocked.file)}</code>: ${escapeHtml(p.blocked.problem)}. The project is not polled until the file is moved aside.</div>`;
  }
  if (p.failing !== undefined) {
    const what = p.failing.commit ? "commit" : "poll";
    status += `<div class="failing">${escapeHtml(plural(p.failing.count, `failed ${what}`))} in a row since ${timeAgo(p.failing.sinceMs, nowMs)}: <span class="error">${escapeHtml(p.failing.message)}</span></div>`;
  }
  if (p.backoff !== undefined) {
    status += `<div class="backoff" data-reason="${escapeHtml(p.backoff.reason)}">polled with backoff (${escapeHtml(p.backoff.reason.replace(/_/g, " "))}): next try ${time(p.backoff.nextTryMs)} <span class="muted">(in ${escapeHtml(formatDuration(p.backoff.nextTryMs - nowMs))})</span></div>`;
  }
  const lastSuccess =
    p.lastSuccessMs === undefined
      ? `<span class="muted">never</span>`
      : timeAgo(p.lastSuccessMs, nowMs) +
        (p.lastSuccessBeforeStart
          ? ` <span class="muted">(last commit before this start)</span>`
          : "");
  return `<tr data-project="${escapeHtml(p.projectId)}" data-health="${escapeHtml(p.health)}">
<td class="project">${named(p.name, p.projectId, "project-name", "project-id")}${renderWhere(p, view)}</td>
<td class="status">${status}</td>
<td class="last-poll">${lastSuccess}</td>
<td class="open">${renderOpen(p, nowMs)}</td>
<td class="failures">${renderFailures(p, nowMs)}</td>
<td class="alerts">${renderAlertCounts(p)}</td>${computes ? `\n<td class="computes">${renderComputes(p, nowMs)}</td>` : ""}
</tr>`;
}

function renderOpen(p: StatusProject, nowMs: number): string {
  if (p.openCount === 0) return `<span class="muted">none</span>`;
  const head = `<span class="count">${escapeHtml(p.openCount)}</span>${p.stuckCount > 0 ? ` <span class="stuck">(${escapeHtml(p.stuckCount)} stuck)</span>` : ""}`;
  const items = p.open.map((op) => renderOpenOperation(op, nowMs)).join("");
  const more = p.openCount - p.open.length;
  return `${head}<ul>${items}</ul>${more > 0 ? `<span class="muted">and ${escapeHtml(more)} more</span>` : ""}`;
}

function renderOpenOperation(op: OpenOperationView, nowMs: number): string {
  return `<li class="operation${op.stuck ? " stuck" : ""}" data-operation="${escapeHtml(op.id)}">${op.stuck ? "STUCK " : ""}<span class="action">${escapeHtml(op.action)}</span> <span class="op-status">${escapeHtml(op.status)}</span> for ${escapeHtml(formatDuration(nowMs - op.createdAtMs))} <code>${escapeHtml(op.id)}</code></li>`;
}

function renderFailures(p: StatusProject, nowMs: number): string {
  if (p.failureCount === 0) return `<span class="muted">none</span>`;
  const items = p.failures.map((f) => renderFailure(f, nowMs)).join("");
  const more = p.failureCount - p.failures.length;
  return `<span class="count">${escapeHtml(p.failureCount)}</span><ul>${items}</ul>${more > 0 ? `<span class="muted">and ${escapeHtml(more)} older</span>` : ""}`;
}

function renderFailure(f: FailureView, nowMs: number): string {
  const retries =
    f.failuresCount > 1
      ? ` <span class="muted">(${escapeHtml(plural(f.failuresCount, "failure"))})</span>`
      : "";
  const error = f.error === undefined ? "" : `<div class="error">${escapeHtml(f.error)}</div>`;
  return `<li class="failure" data-operation="${escapeHtml(f.operationId)}">${timeAgo(f.atMs, nowMs)} <span class="action">${escapeHtml(f.action)}</span> <span class="op-status">${escapeHtml(f.status)}</span>${retries} <code>${escapeHtml(f.operationId)}</code>${error}</li>`;
}

function renderAlertCounts(p: StatusProject): string {
  const parts = [`${escapeHtml(p.pending)} pending`, `${escapeHtml(p.deadLetters)} dead-lettered`];
  if (p.droppedAlerts > 0)
    parts.push(`<span class="stuck">${escapeHtml(p.droppedAlerts)} dropped (outbox full)</span>`);
  return parts.join(" · ");
}
