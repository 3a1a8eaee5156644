/**
 * The status page's alert outbox and dead letters: each sink's pending alerts and dead letters,
 * and the most recent dead letters of all.
 */
import { escapeHtml, named, timeAgo } from "../shared/html.js";
import type { DeadLetterView, SinkStatus } from "./outbox-status.js";

/** What the outbox and dead letters sections read of the page's view (`StatusView`). */
export interface OutboxPart {
  readonly generatedAtMs: number;
  readonly sinks: readonly SinkStatus[];
  /** The most recent; `counts.deadLetters` counts them all. */
  readonly deadLetters: readonly DeadLetterView[];
  readonly counts: { readonly deadLetters: number };
}

export function renderOutbox(view: OutboxPart): string {
  if (view.sinks.length === 0) {
    return `<section id="outbox">
<h2>Alert outbox</h2>
<p class="note" id="no-sinks">No sink is configured: alerts are not sent.</p>
</section>`;
  }
  const rows = view.sinks.map((s) => renderSink(s, view.generatedAtMs)).join("\n");
  return `<section id="outbox">
<h2>Alert outbox</h2>
<table>
<thead><tr><th>Sink</th><th>Kind</th><th class="num">Pending</th><th>Oldest pending</th><th class="num">Dead letters</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>`;
}

function renderSink(s: SinkStatus, nowMs: number): string {
  return `<tr data-sink="${escapeHtml(s.name)}">
<td class="sink-name">${escapeHtml(s.name)}</td>
<td>${s.kind === undefined ? `<span class="muted">not configured</span>` : escapeHtml(s.kind)}</td>
<td class="num pending">${escapeHtml(s.pending)}</td>
<td class="oldest">${s.oldestPendingMs === undefined ? `<span class="muted">—</span>` : timeAgo(s.oldestPendingMs, nowMs)}</td>
<td class="num dead">${escapeHtml(s.deadLetters)}</td>
</tr>`;
}

export function renderDeadLetters(view: OutboxPart): string {
  if (view.deadLetters.length === 0) {
    return `<section id="dead-letters">
<h2>Dead letters</h2>
<p class="note" id="no-dead-letters">None.</p>
</section>`;
  }
  const rows = view.deadLetters.map((d) => renderDeadLetter(d, view.generatedAtMs)).join("\n");
  const more = view.counts.deadLetters - view.deadLetters.length;
  return `<section id="dead-letters">
<h2>Dead letters</h2>
<table>
<thead><tr><th>When</th><th>Sink</th><th>Reason</th><th>Project</th><th>Alert</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
${more > 0 ? `<p class="note">The ${escapeHtml(view.deadLetters.length)} most recent of ${escapeHtml(view.counts.deadLetters)}.</p>` : ""}
</section>`;
}

function renderDeadLetter(d: DeadLetterView, nowMs: number): string {
  return `<tr class="dead-letter" data-sink="${escapeHtml(d.sink)}">
<td>${timeAgo(d.atMs, nowMs)}</td>
<td class="sink-name">${escapeHtml(d.sink)}</td>
<td class="reason">${escapeHtml(d.reason)}</td>
<td>${named(d.projectName, d.projectId, "project-name")}</td>
<td>${escapeHtml(d.alertKind)}: <span class="action">${escapeHtml(d.action)}</span> <span class="op-status">${escapeHtml(d.status)}</span> <code>${escapeHtml(d.operationId)}</code></td>
</tr>`;
}
