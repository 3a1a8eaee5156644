/**
 * The status page's silences: at `full` each configured silence (its window, whether it is open
 * now, what it matches) and the recently silenced alerts; at `summary` how many of each.
 */
import { escapeHtml, formatDuration, named, plural, time, timeAgo } from "../shared/html.js";
import type { SilencedRow, SilenceStatus } from "./silence-status.js";

/** What the silences section reads of the page's view (`StatusView`). */
export interface SilencesPart {
  readonly generatedAtMs: number;
  readonly silences: readonly SilenceStatus[];
  readonly silenced: readonly SilencedRow[];
}

/** Summary level: how many silences there are, how many are open, how many alerts they kept. */
export function renderSilenceCounts(view: SilencesPart): string {
  if (view.silences.length === 0 && view.silenced.length === 0) return "";
  const open = view.silences.filter((s) => s.active).length;
  return `<p class="note" id="silence-counts">${escapeHtml(plural(view.silences.length, "silence"))} configured, ${escapeHtml(open)} open now; ${escapeHtml(plural(view.silenced.length, "alert"))} silenced recently.</p>`;
}

export function renderSilences(view: SilencesPart): string {
  if (view.silences.length === 0 && view.silenced.length === 0) {
    return `<section id="silences">
<h2>Silences</h2>
<p class="note" id="no-silences">None configured.</p>
</section>`;
  }
  const rows = view.silences.map((s) => renderSilence(s, view.generatedAtMs)).join("\n");
  const silenced =
    view.silenced.length === 0
      ? `<p class="note" id="none-silenced">No alert silenced since the start.</p>`
      : `<table id="silenced">
<thead><tr><th>When</th><th>Silence</th><th>Sinks</th><th>Project</th><th>Alert</th></tr></thead>
<tbody>
${view.silenced.map((a) => renderSilenced(a, view.generatedAtMs)).join("\n")}
</tbody>
</table>`;
  return `<section id="silences">
<h2>Silences</h2>
<table>
<thead><tr><th>Silence</th><th>Window</th><th>Now</th><th>Matches</th><th>Sinks</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
<h3>Recently silenced alerts</h3>
${silenced}
</section>`;
}

function renderSilence(s: SilenceStatus, nowMs: number): string {
  const w = s.window;
  const window =
    w.kind === "one_off"
      ? `${time(w.startMs)} to ${time(w.endMs)}`
      : `<code>${escapeHtml(w.cron)}</code> for ${escapeHtml(formatDuration(w.durationSeconds * 1000))} (${escapeHtml(w.timeZone)})`;
  const now = s.active
    ? `<span class="badge warn">open</span> ${s.untilMs === undefined ? "with no end in sight" : `until ${time(s.untilMs)} <span class="muted">(in ${escapeHtml(formatDuration(s.untilMs - nowMs))})</span>`}`
    : s.nextMs === undefined
      ? `<span class="muted">closed for good</span>`
      : `closed; opens ${time(s.nextMs)} <span class="muted">(in ${escapeHtml(formatDuration(s.nextMs - nowMs))})</span>`;
  const comment =
    s.comment === undefined ? "" : `<div class="muted">${escapeHtml(s.comment)}</div>`;
  return `<tr class="silence" data-silence="${escapeHtml(s.name)}" data-active="${s.active ? "true" : "false"}">
<td>${escapeHtml(s.name)}${comment}</td>
<td>${window}</td>
<td class="now">${now}</td>
<td>${s.conditions === "" ? `<span class="muted">every alert</span>` : escapeHtml(s.conditions)}</td>
<td>${s.sinks === undefined ? `<span class="muted">all</span>` : escapeHtml(s.sinks.join(", "))}</td>
</tr>`;
}

function renderSilenced(a: SilencedRow, nowMs: number): string {
  return `<tr class="silenced-alert" data-silence="${escapeHtml(a.silence)}">
<td>${timeAgo(a.atMs, nowMs)}</td>
<td class="silence-name">${escapeHtml(a.silence)}</td>
<td>${escapeHtml(a.sinks.join(", "))}</td>
<td>${named(a.projectName, a.projectId, "project-name")}</td>
<td>${escapeHtml(a.kind)}: <span class="action">${escapeHtml(a.action)}</span> <span class="op-status">${escapeHtml(a.status)}</span> <code>${escapeHtml(a.operationId)}</code></td>
</tr>`;
}
