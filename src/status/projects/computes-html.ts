/** The computes of a project's row on the status page: readings, advice, failures. */
import { escapeHtml, formatDuration, named, plural, timeAgo } from "../shared/html.js";
import type { ComputeStatus } from "./compute-status.js";
import type { StatusProject } from "./project-rows.js";

const PROBE_STATE_LABELS: Readonly<Record<ComputeStatus["state"], string>> = {
  idle: "idle: not connected to",
  waiting: "active: first reading due",
  following: "in use: read every interval",
  quiet: "not read again before its next start (nobody else used it)",
  backoff: "probe failed: tried again later, never into an idle compute",
};

/** What the compute probe knows of the project's computes: readings, advice, failures. */
export function renderComputes(p: StatusProject, nowMs: number): string {
  if (p.computeCount === 0) return `<span class="muted">none probed</span>`;
  const items = p.computes.map((c) => renderCompute(c, nowMs)).join("");
  const more = p.computeCount - p.computes.length;
  return `<ul>${items}</ul>${more > 0 ? `<span class="muted">and ${escapeHtml(more)} more</span>` : ""}`;
}

function renderCompute(c: ComputeStatus, nowMs: number): string {
  const parts = [named(c.endpointName, c.endpointId, "endpoint-name")];
  const r = c.reading;
  if (r !== undefined) {
    const ratio = r.hitRatio === undefined ? "—" : `${r.hitRatio.toFixed(2)}%`;
    const limit = r.maxConnections === undefined ? "" : ` of ${escapeHtml(r.maxConnections)}`;
    parts.push(
      `file cache <span class="hit-ratio">${escapeHtml(ratio)}</span>`,
      `<span class="connections">${escapeHtml(r.connections)}${limit}</span> connections`,
      `read ${escapeHtml(formatDuration(nowMs - r.atMs))} ago, started ${escapeHtml(formatDuration(nowMs - r.startedAtMs))} ago`,
    );
  }
  const state = `<div class="muted probe-state">${escapeHtml(PROBE_STATE_LABELS[c.state])}</div>`;
  const advice =
    c.advised.length === 0
      ? ""
      : `<div class="advice stuck">larger compute advised: ${escapeHtml(c.advised.map((a) => (a === "file_cache" ? "file cache hit ratio" : "connections near max_connections")).join(", "))}</div>`;
  const f = c.failure;
  const failure =
    f === undefined
      ? ""
      : `<div class="probe-failure">${escapeHtml(plural(f.count, "failed probe"))} since ${timeAgo(f.sinceMs, nowMs)}: <span class="reason">${escapeHtml(f.reason)}</span> <span class="error">${escapeHtml(f.message)}</span></div>`;
  return `<li class="compute" data-endpoint="${escapeHtml(c.endpointId)}" data-probe-state="${escapeHtml(c.state)}">${parts.join(" · ")}${state}${advice}${failure}</li>`;
}
