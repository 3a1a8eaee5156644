/**
 * Renders the status page: a pure function from the view model to one small HTML document with
 * an inline stylesheet and no script. Every dynamic value goes through `escapeHtml` (operation
 * error texts, incidents' error classes and the names of projects, organisations and endpoints
 * come from outside); the page refreshes itself every 10 seconds, keeping its filter (a plain GET
 * form: `?account=`, `?org=`). Open platform incidents come first, above everything else; each
 * section is rendered by its subject's room.
 */
import { renderAccounts, renderDiscovery } from "./accounts/accounts-html.js";
import { renderDeadLetters, renderOutbox } from "./alerts/outbox-html.js";
import { renderSilenceCounts, renderSilences } from "./alerts/silences-html.js";
import { renderIncidents } from "./incidents/incidents-html.js";
import { renderFilter } from "./projects/filter-html.js";
import { renderProjects } from "./projects/projects-html.js";
import { renderSummary } from "./projects/summary-html.js";
import { renderReplica } from "./replica/replica-html.js";
import { escapeHtml, time } from "./shared/html.js";
import type { StatusView } from "./status-view.js";

/** Seconds between the page's own refreshes. */
export const REFRESH_SECONDS = 10;

const STYLE = `
:root{color-scheme:light dark;--bad:#c62828;--warn:#b26a00;--ok:#2e7d32;--muted:#777;--line:#8884}
body{font:14px/1.4 system-ui,sans-serif;margin:1rem 1.5rem;max-width:110rem}
h1{font-size:1.4rem;margin:0 0 .25rem}h1 small{font-weight:normal;color:var(--muted)}
h2{font-size:1.1rem;margin:1.5rem 0 .5rem}
table{border-collapse:collapse;width:100%}
th,td{text-align:left;vertical-align:top;padding:.3rem .5rem;border-bottom:1px solid var(--line)}
th{font-weight:600}td.num,th.num{text-align:right}
ul{margin:.2rem 0;padding-left:1.1rem}
code{font:12px ui-monospace,monospace;word-break:break-all}
.project-id{white-space:nowrap;word-break:normal}
.project-name,.endpoint-name{font-weight:600;word-break:break-word}.project-where{font-size:12px}
#filter{display:flex;flex-wrap:wrap;align-items:center;gap:.5rem 1rem;margin:.75rem 0}
.muted,.note{color:var(--muted)}.note{margin:.4rem 0}
.badge{display:inline-block;padding:0 .4rem;border-radius:.3rem;color:#fff;background:var(--muted);white-space:nowrap}
.badge.ok{background:var(--ok)}.badge.bad{background:var(--bad)}.badge.warn{background:var(--warn)}
.counts{list-style:none;padding:0;display:flex;flex-wrap:wrap;gap:.5rem 1.5rem}
.counts b{font-size:1.2rem}.counts .bad b{color:var(--bad)}.counts .warn b{color:var(--warn)}
.stuck{color:var(--bad);font-weight:600}
.error{white-space:pre-wrap;word-break:break-word;color:var(--bad)}
.banner{border:1px solid var(--bad);padding:.5rem;border-radius:.3rem}
.banner.incident{margin:.5rem 0}.banner.incident p{margin:.2rem 0}
nav a{margin-right:1rem}
`;

export function renderStatusPage(view: StatusView, detail: "summary" | "full" = "full"): string {
  const full = detail === "full";
  const reason = view.notReadyReason;
  const problems =
    view.readyProblems === undefined
      ? ""
      : ` <span class="muted">but: ${escapeHtml(view.readyProblems)}</span>`;
  const readiness =
    reason === undefined
      ? `<span id="readiness" class="badge ok">ready</span>${problems}`
      : `<span id="readiness" class="badge bad">not ready</span> <span class="muted">${escapeHtml(reason)}</span>`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="${REFRESH_SECONDS}">
<title>pgcp-exporter status</title>
<style>${STYLE}</style>
</head>
<body>
<header>
<h1>pgcp-exporter <small id="version">${escapeHtml(view.version)}</small></h1>
<p>${full ? `API <code id="api-url">${escapeHtml(view.apiUrl)}</code> · ` : ""}${readiness} · generated ${time(view.generatedAtMs)}</p>
<nav><a href="metrics">/metrics</a><a href="healthz">/healthz</a><a href="readyz">/readyz</a></nav>
</header>
<main>
${renderIncidents(view, full)}${renderReplica(view, full)}${full ? renderDiscovery(view) + renderFilter(view) : ""}${renderSummary(view)}
${full ? `${renderAccounts(view)}${renderProjects(view)}\n${renderOutbox(view)}\n${renderDeadLetters(view)}\n${renderSilences(view)}` : `${renderSilenceCounts(view)}\n<p class="note" id="summary-only">This page shows counts only (<code>status.page: summary</code>): no project, operation or error text.</p>`}
</main>
<footer class="note">Refreshes every ${REFRESH_SECONDS} s. Every project's series are on <a href="metrics">/metrics</a>.</footer>
</body>
</html>
`;
}
