/**
 * The Slack message for one batch of alerts: Block Kit blocks plus a plain `text` fallback (the
 * notification and screen-reader text). Pure, so the layout and Slack's limits are tested
 * without a network.
 *
 * Layout: a header (worst kind's emoji, count, project), a context line counting the kinds, one
 * section per alert (at most `maxItems`, default 20), then "and N more" when some are left out.
 * That is at most `maxItems + 3` blocks, well under Slack's 50.
 */
import type { Alert, AlertKind } from "../../store/index.js";
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
};

const KINDS_BY_RANK = (Object.keys(KIND_STYLE) as AlertKind[]).sort(
  (a, b) => KIND_STYLE[a].rank - KIND_STYLE[b].rank,
);

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
  const worst = alerts.reduce(
    (w, a) => (KIND_STYLE[a.kind].rank < KIND_STYLE[w].rank ? a.kind : w),
    alerts[0]?.kind ?? "operation_failed",
  );
  return `${KIND_STYLE[worst].emoji} ${countOf(alerts.length, "alert")} in ${scope(projects)}`;
}

/** The batch's projects, each as its name beside its id (the id alone while unnamed). */
function projectsOf(alerts: readonly Alert[]): string[] {
  const names = new Map<string, string | undefined>();
  for (const a of alerts) {
    if (names.get(a.projectId) === undefined) names.set(a.projectId, a.projectName);
  }
  return [...names].map(([id, name]) => nameBesideId(name, id));
}

function scope(projects: readonly string[]): string {
  return projects.length === 1
    ? `project ${projects[0] ?? ""}`
    : `${projects.length} projects: ${projects.join(", ")}`;
}

/** A name beside its id as inline code, for mrkdwn: "Tenant Acme `proj-1`". */
function mrkdwnNamed(name: string | undefined, id: string): string {
  const flat = flatName(name, id);
  const code = inlineCode(id, 100);
  return flat === undefined ? code : `${escapeAndTruncate(flat, 100)} ${code}`;
}

/** "2 failed · 1 stuck · 1 recovered" (plain; escaped by the caller where needed). */
function kindCounts(alerts: readonly Alert[]): string {
  return KINDS_BY_RANK.map((kind) => [kind, alerts.filter((a) => a.kind === kind).length] as const)
    .filter(([, count]) => count > 0)
    .map(([kind, count]) => `${count} ${KIND_STYLE[kind].word}`)
    .join(" · ");
}

function itemText(alert: Alert, context: ItemContext): string {
  if (alert.kind === "compute_advice") return adviceText(alert, context);
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
    `pgcp-exporter: ${countOf(alerts.length, "alert")} in ${scope(projects)} (${kindCounts(alerts)})`,
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
  const style = KIND_STYLE[alert.kind];
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

function countOf(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? "" : "s"}`;
}
