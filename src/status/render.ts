/**
 * Renders the status page: a pure function from the view model to one small HTML document with
 * an inline stylesheet and no script. Every dynamic value goes through `escapeHtml` (operation
 * error texts, incidents' error classes and the names of projects, organisations and endpoints
 * come from outside); the page refreshes itself every 10 seconds, keeping its filter (a plain GET
 * form: `?account=`, `?org=`). Open platform incidents come first, above everything else.
 */
import type {
  ComputeStatus,
  DeadLetterView,
  FailureView,
  OpenOperationView,
  FilterStatus,
  IncidentView,
  ProjectHealth,
  SilencedRow,
  SilenceStatus,
  SinkStatus,
  StatusProject,
  StatusView,
} from "./view.js";

/** Seconds between the page's own refreshes. */
export const REFRESH_SECONDS = 10;

const HEALTH_LABELS: Readonly<Record<ProjectHealth, string>> = {
  blocked: "blocked",
  poll_failing: "poll failing",
  catching_up: "catching up",
  waiting: "waiting for first poll",
  ok: "ok",
};

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

/** Escapes text for HTML element content and quoted attribute values. */
export function escapeHtml(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

const ESCAPES: Readonly<Record<string, string>> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** `2025-01-01 00:00:05Z`, or an em dash for a time that is not one. */
export function formatTime(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const date = new Date(ms);
  if (Number.isNaN(date.getTime())) return "—";
  return date
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/** A short duration: `4 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return `${s} s`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min`;
  const h = Math.floor(min / 60);
  if (h < 48) return min % 60 === 0 ? `${h} h` : `${h} h ${min % 60} min`;
  const d = Math.floor(h / 24);
  return h % 24 === 0 ? `${d} d` : `${d} d ${h % 24} h`;
}

function time(ms: number): string {
  if (!Number.isFinite(ms)) return "—";
  const iso = new Date(ms).toISOString();
  return `<time datetime="${escapeHtml(iso)}">${escapeHtml(formatTime(ms))}</time>`;
}

/** A time and how long ago it was. */
function timeAgo(ms: number, nowMs: number): string {
  if (!Number.isFinite(ms)) return "—";
  const ago = nowMs - ms;
  const age = ago < 0 ? "in the future" : `${formatDuration(ago)} ago`;
  return `${time(ms)} <span class="muted">(${escapeHtml(age)})</span>`;
}

function plural(n: number, one: string, many = `${one}s`): string {
  return `${n} ${n === 1 ? one : many}`;
}

/** A name from outside beside its id (the id alone while the name is unknown). */
function named(name: string | undefined, id: string, nameClass: string, idClass = ""): string {
  const code = `<code${idClass === "" ? "" : ` class="${idClass}"`}>${escapeHtml(id)}</code>`;
  return name === undefined
    ? code
    : `<span class="${nameClass}">${escapeHtml(name)}</span> ${code}`;
}

/** A link to the page with this filter (relative: the page's own path, behind any proxy). */
function filterHref(filter: { account?: string | undefined; org?: string | undefined }): string {
  const query = new URLSearchParams();
  if (filter.account !== undefined) query.set("account", filter.account);
  if (filter.org !== undefined) query.set("org", filter.org);
  return escapeHtml(`?${query.toString()}`);
}

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

/**
 * The open platform incidents: at `full` a banner each (the oldest, capped) with its action,
 * region, error class, times, failures and first projects; at `summary` how many are open.
 */
function renderIncidents(view: StatusView, full: boolean): string {
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

/**
 * This replica among those sharing the projects (Postgres state store): its id (at `full`), the
 * live replicas, what it holds of the fleet and its share, the projects no live replica holds,
 * and how old its leases are. Nothing with the file store.
 */
function renderReplica(view: StatusView, full: boolean): string {
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

function renderDiscovery(view: StatusView): string {
  // The account is named when there are several (the one of the single-key settings is not).
  const named = view.accounts.length > 1;
  const refused = view.accounts
    .map((a) => {
      const r = a.keyRefusal;
      if (r === undefined) return "";
      return `<p class="banner key-refused" data-account="${escapeHtml(a.name)}">The API refuses the key${named ? ` of the account ${escapeHtml(a.name)}` : ""} since ${timeAgo(r.sinceMs, view.generatedAtMs)}: its projects are not watched, and one poll at a time tries the key again, backing off to every 10 minutes: <span class="error">${escapeHtml(r.message)}</span></p>\n`;
    })
    .join("");
  const wrongUrl = view.accounts
    .map((a) => {
      if (a.wrongBaseUrlSinceMs === undefined) return "";
      return `<p class="banner wrong-base-url" data-account="${escapeHtml(a.name)}">The API answers 404 at its root${named ? ` for the account ${escapeHtml(a.name)}` : ""} since ${timeAgo(a.wrongBaseUrlSinceMs, view.generatedAtMs)}: the base URL <code>${escapeHtml(a.url)}</code> is probably wrong (it should end in <code>/api/v2</code>); its projects are polled again with backoff until it answers.</p>\n`;
    })
    .join("");
  return (
    refused +
    wrongUrl +
    view.discoveryErrors
      .map(
        (d) =>
          `<p class="banner discovery-error" data-account="${escapeHtml(d.account)}">Project discovery${named ? ` of the account ${escapeHtml(d.account)}` : ""} failed ${timeAgo(d.atMs, view.generatedAtMs)}; its previous list of projects stays: <span class="error">${escapeHtml(d.message)}</span></p>\n`,
      )
      .join("")
  );
}

/**
 * The filter by account and organisation: a GET form (no script), shown when there is a choice
 * (several accounts, some organisation) or a filter; what the filter keeps, or why nothing.
 */
function renderFilter(view: StatusView): string {
  const f = view.filter;
  const accountChoice = view.accounts.length > 1 || f?.account !== undefined;
  const orgChoice = view.organisations.length > 0 || f?.orgId !== undefined;
  if (!accountChoice && !orgChoice) return "";
  const option = (value: string, label: string, selected: boolean) =>
    `<option value="${escapeHtml(value)}"${selected ? " selected" : ""}>${escapeHtml(label)}</option>`;
  const accountOptions = view.accounts.map((a) => option(a.name, a.name, a.name === f?.account));
  if (f?.unknownAccount === true && f.account !== undefined) {
    accountOptions.push(option(f.account, `${f.account} (unknown)`, true));
  }
  const orgOptions = view.organisations.map((o) =>
    option(o.id, o.name === undefined ? o.id : `${o.name} (${o.id})`, o.id === f?.orgId),
  );
  if (f?.unknownOrg === true && f.orgId !== undefined) {
    orgOptions.push(option(f.orgId, `${f.orgId} (unknown)`, true));
  }
  const selects = [
    accountChoice
      ? `<label>Account <select name="account">${option("", "every account", f?.account === undefined)}${accountOptions.join("")}</select></label>`
      : "",
    orgChoice
      ? `<label>Organisation <select name="org">${option("", "every organisation", f?.orgId === undefined)}${orgOptions.join("")}</select></label>`
      : "",
  ].join("");
  const form = `<form id="filter" method="get">${selects}<button type="submit">Show</button>${f === undefined ? "" : `<a href="?">show every project</a>`}</form>\n`;
  return form + (f === undefined ? "" : renderFilterNote(view, f));
}

function renderFilterNote(view: StatusView, f: FilterStatus): string {
  const what: string[] = [];
  if (f.account !== undefined) what.push(`the account <b>${escapeHtml(f.account)}</b>`);
  if (f.orgId !== undefined) {
    what.push(`the organisation ${named(f.orgName, f.orgId, "org-name")}`);
  }
  const notes: string[] = [];
  if (f.unknownAccount && f.account !== undefined) {
    const names = view.accounts.map((a) => a.name);
    notes.push(
      `<p class="note" id="filter-unknown-account">No account is named <b>${escapeHtml(f.account)}</b>${names.length === 0 ? "" : ` (the accounts: ${escapeHtml(names.join(", "))})`}: no project is shown.</p>`,
    );
  }
  if (f.unknownOrg && f.orgId !== undefined) {
    notes.push(
      `<p class="note" id="filter-unknown-org">No watched project is known to belong to the organisation <code>${escapeHtml(f.orgId)}</code>: no project is shown. A project's organisation is known once the exporter has read the project, shortly after it is first watched.</p>`,
    );
  }
  const shown = `<p class="note" id="filter-note">Showing the ${escapeHtml(view.counts.projects)} of ${escapeHtml(plural(f.watched, "watched project"))} of ${what.join(" and ")}: the counts, outbox, dead letters and silenced alerts below are theirs alone.</p>`;
  return `${shown}\n${notes.map((n) => `${n}\n`).join("")}`;
}

function renderSummary(view: StatusView): string {
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

function renderProjects(view: StatusView): string {
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
function renderWhere(p: StatusProject, view: StatusView): string {
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

function renderProject(p: StatusProject, view: StatusView, computes: boolean): string {
  const nowMs = view.generatedAtMs;
  let status = healthBadge(p.health);
  if (p.blocked !== undefined) {
    status += `<div class="blocked">state file <code>${escapeHtml(p.blocked.file)}</code>: ${escapeHtml(p.blocked.problem)}. The project is not polled until the file is moved aside.</div>`;
  }
  if (p.failing !== undefined) {
    const what = p.failing.commit ? "commit" : "poll";
    status += `<div class="failing">${escapeHtml(plural(p.failing.count, `failed ${what}`))} in a row since ${timeAgo(p.failing.sinceMs, nowMs)}: <span class="error">${escapeHtml(p.failing.message)}</span></div>`;
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

const PROBE_STATE_LABELS: Readonly<Record<ComputeStatus["state"], string>> = {
  idle: "idle: not connected to",
  waiting: "active: first reading due",
  following: "in use: read every interval",
  quiet: "not read again before its next start (nobody else used it)",
  backoff: "probe failed: tried again later, never into an idle compute",
};

/** What the compute probe knows of the project's computes: readings, advice, failures. */
function renderComputes(p: StatusProject, nowMs: number): string {
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

/** Each account's projects and request budget; nothing for the one account of `api.key`. */
function renderAccounts(view: StatusView): string {
  if (view.accounts.length < 2) return "";
  const rows = view.accounts
    .map(
      (a) => `<tr data-account="${escapeHtml(a.name)}">
<td class="account-name">${escapeHtml(a.name)}</td>
<td><code>${escapeHtml(a.url)}</code></td>
<td class="num projects">${escapeHtml(a.projects)}</td>
<td class="num stretch">${escapeHtml(a.stretch.toFixed(2))}</td>
<td class="num intervals">${escapeHtml(`${Math.round(a.intervals.fast)} s / ${Math.round(a.intervals.active)} s / ${Math.round(a.intervals.idle)} s`)}</td>
<td class="num tokens">${escapeHtml(Math.floor(a.tokens))}</td>
</tr>`,
    )
    .join("\n");
  return `<section id="accounts">
<h2>Accounts</h2>
<p class="note">Each account has its own rate limit; its projects' intervals stretch to fit it.</p>
<table>
<thead><tr><th>Account</th><th>API</th><th class="num">Projects</th><th class="num">Stretch</th><th class="num">Interval (open / active / idle)</th><th class="num">Limiter tokens</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>
`;
}

function renderOutbox(view: StatusView): string {
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

function renderDeadLetters(view: StatusView): string {
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

/** Summary level: how many silences there are, how many are open, how many alerts they kept. */
function renderSilenceCounts(view: StatusView): string {
  if (view.silences.length === 0 && view.silenced.length === 0) return "";
  const open = view.silences.filter((s) => s.active).length;
  return `<p class="note" id="silence-counts">${escapeHtml(plural(view.silences.length, "silence"))} configured, ${escapeHtml(open)} open now; ${escapeHtml(plural(view.silenced.length, "alert"))} silenced recently.</p>`;
}

function renderSilences(view: StatusView): string {
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
