/**
 * Silences as the page shows them: each configured silence and whether its window is open now,
 * and the alerts silences kept from sinks recently (as the tracker heard them), each with its
 * project's name once known.
 */
import { windowState } from "../../alerts/rules/silence-window.js";
import type { SilenceConfig, SilenceWindow } from "../../config/silences.js";
import { projectNameOf, type StatusSource } from "../shared/source.js";
import type { Clean } from "../shared/text.js";

/** An alert that a silence kept from one or more sinks. */
export interface SilencedView {
  readonly projectId: string;
  readonly kind: string;
  readonly operationId: string;
  readonly action: string;
  readonly status: string;
  readonly sinks: readonly string[];
  /** The silence's name. */
  readonly silence: string;
  /** When the poll that raised it was committed (epoch ms). */
  readonly atMs: number;
}

/** A silenced alert as the page lists it: with its project's name, once known. */
export interface SilencedRow extends SilencedView {
  readonly projectName: string | undefined;
}

/** A configured silence, and whether its window is open now. */
export interface SilenceStatus {
  readonly name: string;
  readonly comment: string | undefined;
  readonly window: SilenceWindow;
  /** The sinks it covers; undefined: all. */
  readonly sinks: readonly string[] | undefined;
  /** Its match conditions, as `projects: a, b; kinds: operation_failed` (empty: every alert). */
  readonly conditions: string;
  readonly active: boolean;
  /** Open: when it closes (undefined: occurrences run on). Closed: when it next opens. */
  readonly untilMs: number | undefined;
  readonly nextMs: number | undefined;
}

export function silenceStatus(silence: SilenceConfig, nowMs: number): SilenceStatus {
  const state = windowState(silence.window, nowMs);
  const conditions = Object.entries(silence.match)
    .filter((entry): entry is [string, readonly string[]] => entry[1] !== undefined)
    .map(([key, values]) => `${key}: ${values.join(", ")}`)
    .join("; ");
  return {
    name: silence.name,
    comment: silence.comment,
    window: silence.window,
    sinks: silence.sinks,
    conditions,
    active: state.active,
    untilMs: state.active ? state.untilMs : undefined,
    nextMs: state.active ? undefined : state.nextMs,
  };
}

/** The recently silenced alerts of the projects shown (all when `shown` is undefined), named. */
export function silencedRows(
  silenced: readonly SilencedView[],
  shown: ReadonlySet<string> | undefined,
  source: StatusSource,
  clean: Clean,
): SilencedRow[] {
  return silenced
    .filter((a) => shown?.has(a.projectId) ?? true)
    .map((a) => ({ ...a, projectName: projectNameOf(source, a.projectId, clean) }));
}
