/**
 * The Slack message for one batch of alerts: Block Kit blocks plus a plain `text` fallback (the
 * notification and screen-reader text). Pure, so the layout and Slack's limits are tested
 * without a network.
 *
 * Layout: a header (worst kind's emoji, count, project), a context line counting the kinds, one
 * section per alert (at most `maxItems`, default 20), then "and N more" when some are left out.
 * That is at most `maxItems + 3` blocks, well under Slack's 50.
 *
 * A platform incident alone in its batch (as the notifier sends them) has a message of its own:
 * a header saying what fails where, one section (the action, region, projects, failures and the
 * normalised error; for its resolution, how long it lasted), and a context line with the
 * incident's id. Slack is told of an incident when it opens and when it is resolved: an incoming
 * webhook cannot edit a message, so its updates are left out of what is posted (`slackAlerts`).
 */
import type { Alert, AlertKind } from "../../store/index.js";
import {
  countOf,
  incidentHeadline,
  incidentOf,
  incidentProjectNames,
  incidentResolvedLine,
  incidentStateOf,
  regionText,
} from "./incident.js";
import {
  codeBlock,
  escapeAndTruncate,
  escapeMrkdwn,
  flatName,
  formatDuration,
  formatTime,
  inlineCode,
  mrkdwnLink,
  nameBesideId,
  truncatePlain,
} from "./mrkdwn.js";

/** Slack's limits (https://docs.slack.dev/reference/block-kit/blocks). */
export const SLACK_LIMITS = {
  maxBlocks: 50,
  /** A section's text, and a context element's text. */
  maxSectionText: 3000,
  /** A header block's plain text. */
  maxHeaderText: 150,
  /** Items shown in one message; the rest are counted in an "and N more" line. */
  maxItems: 20,
  /** How much of an operation's error is quoted. */
  maxErrorText: 1000,
  /** The top-level fallback text (Slack truncates past 40 000; notifications show far less). */
  maxFallbackText: 3000,
  /** Projects of a platform incident named; the rest are counted ("and N more"). */
  maxIncidentProjects: 20,
  /** Room for the named projects of a platform incident in its section. */
  maxIncidentProjectsText: 1500,
} as const;

export interface SlackTextObject {
  readonly type: "plain_text" | "mrkdwn";
  readonly text: string;
  readonly emoji?: boolean;
}

export type SlackBlock =
  | { readonly type: "header"; readonly text: SlackTextObject }
  | { readonly type: "section"; readonly text: SlackTextObject }
  | { readonly type: "context"; readonly elements: readonly SlackTextObject[] };

/** The JSON body posted to an incoming webhook. */
export interface SlackMessage {
  readonly text: string;
  readonly blocks: readonly SlackBlock[];
  readonly unfurl_links: false;
  readonly unfurl_media: false;
}

export interface KindStyle {
  readonly emoji: string;
  /** For a heading: "Operation failed". */
  readonly title: string;
  /** For a count: "2 failed". */
  readonly word: string;
  /** Lower is worse; the header shows the worst kind of the batch. */
  readonly rank: number;
}

export const KIND_STYLE: Readonly<Record<AlertKind, KindStyle>> = {
  operation_failed: { emoji: ":red_circle:", title: "Operation failed", word: "failed", rank: 0 },
  operation_stuck: {
    emoji: ":hourglass_flowing_sand:",
    title: "Operation stuck",
    word: "stuck",
    rank: 1,
  },
  operation_retrying: {
    emoji: ":repeat:",
    title: "Operation retrying",
    word: "retrying",
    rank: 2,
  },
  operation_recovered: {
    emoji: ":white_check_mark:",
    title: "Operation recovered",
    word: "recovered",
    rank: 3,
  },
  compute_advice: {
    emoji: ":bulb:",
    title: "Larger compute advised",
    word: "advised",
    rank: 4,
  },
  platform_incident: {
    emoji: ":rotating_light:",
    title: "Platform incident",
    word: "platform-wide",
    rank: -1,
  },
};

/** A platform incident's resolution, which the kind's own style would show as firing. */
const INCIDENT_RESOLVED_STYLE: KindStyle = {
  emoji: ":white_check_mark:",
  title: "Platform incident resolved",
  word: "platform-wide resolved",
  rank: 3,
};

const STYLES_BY_RANK = [...Object.values(KIND_STYLE), INCIDENT_RESOLVED_STYLE].sort(
  (a, b) => a.rank - b.rank,
);

/** How `alert` is shown: its kind's style, but for a resolved incident. */
function styleOf(alert: Alert): KindStyle {
  return isResolvedIncident(alert) ? INCIDENT_RESOLVED_STYLE : KIND_STYLE[alert.kind];
}

function isResolvedIncident(alert: Alert): boolean {
  return alert.kind === "platform_incident" && incidentStateOf(alert) === "resolved";
}

/**
 * The alerts of a batch that Slack is told of: all but the updates of platform incidents (a
 * posted message cannot be edited; the incident's opening and its resolution are posted).
 */
export function slackAlerts(alerts: readonly Alert[]): Alert[] {
  return alerts.filter(
    (a) => !(a.kind === "platform_incident" && incidentStateOf(a) === "updated"),
  );
}

export interface SlackRenderOptions {
  /** Alerts shown as items (1 to 40); default 20. */
  readonly maxItems?: number | undefined;
}

/** Renders a non-empty batch (normally the alerts of one project). */
export function renderSlackMessage(
  alerts: readonly Alert[],
  options: SlackRenderOptions = {},
): SlackMessage {
  if (alerts.length === 0) throw new RangeError("renderSlackMessage: no alerts");
  const [only] = alerts;
  if (alerts.length === 1 && only?.kind === "platform_incident") return incidentMessage(only);
  const maxItems = Math.min(40, Math.max(1, Math.floor(options.maxItems ?? SLACK_LIMITS.maxItems)));
  const projects = projectsOf(alerts);
  const shown = alerts.slice(0, maxItems);
  const hidden = alerts.length - shown.length;
  const byId = new Map(alerts.map((a) => [a.id, a]));
  const context: ItemContext = { byId, manyProjects: projects.length > 1 };

  const blocks: SlackBlock[] = [
    {
      type: "header",
      text: {
        type: "plain_text",
        text: truncatePlain(headline(alerts, projects), SLACK_LIMITS.maxHeaderText),
        emoji: true,
      },
    },
    {
      type: "context",
      elements: [{ type: "mrkdwn", text: escapeMrkdwn(kindCounts(alerts)) }],
    },
    ...shown.map((alert): SlackBlock => ({
      type: "section",
      text: { type: "mrkdwn", text: itemText(alert, context) },
    })),
  ];
  if (hidden > 0) {
    blocks.push({
      type: "context",
      elements: [{ type: "mrkdwn", text: `_and ${hidden} more_` }],
    });
  }
  return {
    text: fallbackText(alerts, projects, shown.length),
    blocks,
    unfurl_links: false,
    unfurl_media: false,
  };
}

interface ItemContext {
  readonly byId: ReadonlyMap<string, Alert>;
  readonly manyProjects: boolean;
}

/** ":red_circle: 3 alerts in project p-1" (emoji of the worst kind present). */
function headline(alerts: readonly Alert[], projects: readonly string[]): string {
  const worst = alerts.reduce<KindStyle>(
    (w, a) => (styleOf(a).rank < w.rank ? styleOf(a) : w),
    KIND_STYLE.compute_advice,
  );
  return `${worst.emoji} ${countOf(alerts.length, "alert")}${scope(projects)}`;
}

/**
 * The batch's projects, each as its name beside its id (the id alone while unnamed); a platform
 * incident's carrying project is none of them.
 */
function projectsOf(alerts: readonly Alert[]): string[] {
  const names = new Map<string, string | undefined>();
  for (const a of alerts) {
    if (a.kind === "platform_incident") continue;
    if (names.get(a.projectId) === undefined) names.set(a.projectId, a.projectName);
  }
  return [...names].map(([id, name]) => nameBesideId(name, id));
}

/** " in project p-1", " in 2 projects: p-1, p-2", or nothing (platform incidents only). */
function scope(projects: readonly string[]): string {
  if (projects.length === 0) return "";
  return projects.length === 1
    ? ` in project ${projects[0] ?? ""}`
    : ` in ${projects.length} projects: ${projects.join(", ")}`;
}

/** A name beside its id as inline code, for mrkdwn: "Tenant Acme `proj-1`". */
function mrkdwnNamed(name: string | undefined, id: string): string {
  const flat = flatName(name, id);
  const code = inlineCode(id, 100);
  return flat === undefined ? code : `${escapeAndTruncate(flat, 100)} ${code}`;
}

/** "2 failed · 1 stuck · 1 recovered" (plain; escaped by the caller where needed). */
function kindCounts(alerts: readonly Alert[]): string {
  return STYLES_BY_RANK.map(
    (style) => [style, alerts.filter((a) => styleOf(a) === style).length] as const,
  )
    .filter(([, count]) => count > 0)
    .map(([style, count]) => `${count} ${style.word}`)
    .join(" · ");
}

function itemText(alert: Alert, context: ItemContext): string {
  if (alert.kind === "compute_advice") return adviceText(alert, context);
  if (alert.kind === "platform_incident") return incidentText(alert);
  const style = KIND_STYLE[alert.kind];
  const lines = [
    `${style.emoji} *${style.title}* · ${inlineCode(alert.action, 100)} · status ${inlineCode(alert.status, 60)} · ${countOf(alert.failuresCount, "failure")}`,
    whereLine(alert, context.manyProjects),
    `created ${formatTime(alert.createdAt)} · updated ${formatTime(alert.updatedAt)} · ${alert.kind === "operation_stuck" ? "open for" : "duration"} ${formatDuration(alert.durationSeconds)}`,
  ];
  if (alert.kind === "operation_recovered" && alert.resolves !== undefined) {
    lines.push(resolvesLine(alert.resolves, context.byId.get(alert.resolves)));
  }
  if (alert.link !== undefined) {
    const link = mrkdwnLink(alert.link, "Open in console", 1000);
    if (link !== undefined) lines.push(link);
  }
  let text = lines.join("\n");
  if (alert.error !== undefined) {
    const room = SLACK_LIMITS.maxSectionText - text.length - 1;
    const block = codeBlock(alert.error, Math.min(room, SLACK_LIMITS.maxErrorText + 6));
    if (block !== undefined) text += `\n${block}`;
  }
  return text;
}

/** A compute's advice: the reason, where, and the advice's own sentence. */
function adviceText(alert: Alert, context: ItemContext): string {
  const style = KIND_STYLE[alert.kind];
  const lines = [
    `${style.emoji} *${style.title}* · reason ${inlineCode(alert.status, 60)}`,
    whereLine(alert, context.manyProjects),
    `compute started ${formatTime(alert.createdAt)} · advised ${formatTime(alert.detectedAt)}`,
  ];
  if (alert.advice !== undefined) {
    lines.push(escapeAndTruncate(alert.advice.summary, SLACK_LIMITS.maxErrorText));
  }
  return lines.join("\n");
}

/**
 * A platform incident's own message: what fails where as the header, the incident as one
 * section, its id in a context line.
 */
function incidentMessage(alert: Alert): SlackMessage {
  const incident = incidentOf(alert);
  const style = styleOf(alert);
  const where = `${alert.action} ${isResolvedIncident(alert) ? "in" : "failing in"} ${regionText(incident)}`;
  return {
    text: incidentFallback(alert),
    blocks: [
      {
        type: "header",
        text: {
          type: "plain_text",
          text: truncatePlain(
            `${style.emoji} ${style.title}: ${where}`,
            SLACK_LIMITS.maxHeaderText,
          ),
          emoji: true,
        },
      },
      { type: "section", text: { type: "mrkdwn", text: incidentText(alert) } },
      {
        type: "context",
        elements: [{ type: "mrkdwn", text: `incident ${inlineCode(incident.id, 200)}` }],
      },
    ],
    unfurl_links: false,
    unfurl_media: false,
  };
}

/**
 * A platform incident's fallback: its line, then, while it fires, its first 20 projects and the
 * count of the others; escaped, within the limit.
 */
function incidentFallback(alert: Alert): string {
  const incident = incidentOf(alert);
  const resolved = isResolvedIncident(alert);
  const summary = resolved ? incidentResolvedLine(alert) : incidentHeadline(alert);
  const text = escapeAndTruncate(`pgcp-exporter: ${styleOf(alert).title}: ${summary}`, 1000);
  if (resolved || incident.projects.length === 0) return text;
  const names = incidentProjectNames(incident).slice(0, SLACK_LIMITS.maxIncidentProjects);
  const more = Math.max(0, incident.projectCount - names.length);
  const list = `\nprojects: ${names.join(", ")}${more > 0 ? ` and ${more} more` : ""}`;
  return text + escapeAndTruncate(list, SLACK_LIMITS.maxFallbackText - text.length);
}

/**
 * A platform incident: the action, region, projects and failures; when it fires, its times and
 * the projects named (20, then "and N more"); when resolved, how long it lasted; and the
 * normalised error.
 */
function incidentText(alert: Alert): string {
  const incident = incidentOf(alert);
  const style = styleOf(alert);
  const lines = [
    `${style.emoji} *${style.title}* · ${inlineCode(alert.action, 100)} · region ${inlineCode(incident.regionId, 100)} · ${countOf(incident.projectCount, "project")} · ${countOf(alert.failuresCount, "failure")}`,
  ];
  if (isResolvedIncident(alert)) {
    lines.push(
      `lasted ${formatDuration(alert.durationSeconds)}: first failure ${formatTime(alert.createdAt)} · latest ${formatTime(alert.updatedAt)} · resolved ${formatTime(alert.detectedAt)}`,
    );
  } else {
    lines.push(
      `first failure ${formatTime(alert.createdAt)} · latest ${formatTime(alert.updatedAt)} · over ${formatDuration(alert.durationSeconds)}`,
    );
    const projects = projectsLine(alert);
    if (projects !== undefined) lines.push(projects);
    if (alert.link !== undefined) {
      const link = mrkdwnLink(alert.link, "Open in console", 1000);
      if (link !== undefined) lines.push(link);
    }
  }
  const text = lines.join("\n");
  const room = SLACK_LIMITS.maxSectionText - text.length - 1;
  const block = codeBlock(incident.errorClass, Math.min(room, SLACK_LIMITS.maxErrorText + 6));
  return block === undefined ? text : `${text}\n${block}`;
}

/**
 * "projects: Tenant Acme `p-1`, `p-2` _and 10 more_": the first 20 listed, as many as fit the
 * room, and the count of the others; undefined when none is listed.
 */
function projectsLine(alert: Alert): string | undefined {
  const incident = incidentOf(alert);
  const room = SLACK_LIMITS.maxIncidentProjectsText;
  const named: string[] = [];
  let length = 0;
  for (const p of incident.projects.slice(0, SLACK_LIMITS.maxIncidentProjects)) {
    const item = mrkdwnNamed(p.name, p.id);
    if (length + item.length + 2 > room) break;
    named.push(item);
    length += item.length + 2;
  }
  if (named.length === 0) return undefined;
  const more = Math.max(0, incident.projectCount - named.length);
  return `projects: ${named.join(", ")}${more > 0 ? ` _and ${more} more_` : ""}`;
}

function whereLine(alert: Alert, withProject: boolean): string {
  const parts: string[] = [];
  if (withProject) parts.push(`project ${mrkdwnNamed(alert.projectName, alert.projectId)}`);
  if (alert.branchId !== undefined) {
    parts.push(`branch ${mrkdwnNamed(alert.branchName, alert.branchId)}`);
  }
  if (alert.endpointId !== undefined) {
    parts.push(`endpoint ${mrkdwnNamed(alert.endpointName, alert.endpointId)}`);
  }
  if (alert.operationId !== "") parts.push(`operation ${inlineCode(alert.operationId, 100)}`);
  return parts.join(" · ");
}

/** The failure a recovery resolves: its kind and status when it is in the same batch. */
function resolvesLine(id: string, resolved: Alert | undefined): string {
  if (resolved === undefined) return `resolves alert ${inlineCode(id, 100)}`;
  const style = KIND_STYLE[resolved.kind];
  return `resolves ${style.emoji} *${style.title}* alert ${inlineCode(id, 100)} (status ${inlineCode(resolved.status, 60)}, ${countOf(resolved.failuresCount, "failure")})`;
}

/**
 * The fallback: a summary line, then one line per shown alert, then "and N more"; escaped (the
 * top-level text is mrkdwn too) and cut at whole lines to fit the limit.
 */
function fallbackText(
  alerts: readonly Alert[],
  projects: readonly string[],
  shown: number,
): string {
  const max = SLACK_LIMITS.maxFallbackText;
  let text = escapeAndTruncate(
    `pgcp-exporter: ${countOf(alerts.length, "alert")}${scope(projects)} (${kindCounts(alerts)})`,
    500,
  );
  let left = alerts.length;
  for (const alert of alerts.slice(0, shown)) {
    const line = `\n• ${escapeAndTruncate(plainItem(alert), 300)}`;
    if (text.length + line.length > max - 40) break;
    text += line;
    left -= 1;
  }
  if (left > 0) text += `\nand ${left} more`;
  return text;
}

function plainItem(alert: Alert): string {
  const style = styleOf(alert);
  if (alert.kind === "platform_incident") {
    return `${style.title}: ${isResolvedIncident(alert) ? incidentResolvedLine(alert) : incidentHeadline(alert)}`;
  }
  if (alert.kind === "compute_advice") {
    const on =
      alert.endpointId === undefined
        ? nameBesideId(alert.projectName, alert.projectId)
        : nameBesideId(alert.endpointName, alert.endpointId);
    return `${style.title}: ${alert.status} on ${on}`;
  }
  const where =
    alert.endpointId !== undefined
      ? nameBesideId(alert.endpointName, alert.endpointId)
      : alert.branchId !== undefined
        ? nameBesideId(alert.branchName, alert.branchId)
        : alert.operationId;
  const resolves =
    alert.kind === "operation_recovered" && alert.resolves !== undefined
      ? `, resolves ${alert.resolves}`
      : "";
  return `${style.title}: ${alert.action} (${alert.status}) on ${where}${resolves}`;
}
