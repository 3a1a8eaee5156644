/**
 * The status page's summary: the counts of the shown projects by health, their operations,
 * alerts and (once the compute probe knows of some) computes.
 */
import type { ReplicaStatus } from "../replica/replica-status.js";
import { escapeHtml } from "../shared/html.js";
import type { StatusCounts } from "./project-tally.js";

/** What the summary reads of the page's view (`StatusView`). */
export interface SummaryPart {
  readonly counts: StatusCounts;
  readonly replica: ReplicaStatus | undefined;
  readonly computesProbed: boolean;
}

export function renderSummary(view: SummaryPart): string {
  const c = view.counts;
  const item = (id: string, n: number, label: string, tone: "" | "bad" | "warn" = "") =>
    `<li id="count-${id}"${n > 0 && tone !== "" ? ` class="${tone}"` : ""}><b>${escapeHtml(n)}</b> ${escapeHtml(label)}</li>`;
  return `<section id="summary">
<h2>Summary</h2>
<ul class="counts">
${item("projects", c.projects, `${c.projects === 1 ? "project" : "projects"}${view.replica === undefined ? "" : " held by this replica"}`)}
${item("ok", c.health.ok, "ok")}
${item("blocked", c.health.blocked, "blocked", "bad")}
${item("poll-failing", c.health.poll_failing, "poll failing", "bad")}
${item("catching-up", c.health.catching_up, "catching up", "warn")}
${item("waiting", c.health.waiting, "waiting for first poll", "warn")}
${item("recently-failing", c.recentlyFailing, "with failures in the last hour", "warn")}
${item("open", c.open, c.open === 1 ? "open operation" : "open operations")}
${item("stuck", c.stuck, "stuck", "bad")}
${item("pending", c.pending, c.pending === 1 ? "alert pending" : "alerts pending", "warn")}
${item("dead-letters", c.deadLetters, c.deadLetters === 1 ? "dead letter" : "dead letters", "bad")}
${view.computesProbed ? `${item("computes-failing", c.computesFailing, c.computesFailing === 1 ? "compute probe failing" : "compute probes failing", "bad")}\n${item("computes-advised", c.computesAdvised, c.computesAdvised === 1 ? "larger compute advised" : "larger computes advised", "warn")}\n` : ""}</ul>
</section>`;
}
