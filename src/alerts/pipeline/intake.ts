/**
 * The one way alerts enter the pipeline. Every source submits through it: the poll (the alerts
 * of its transitions), the compute probe (its advice) and the incident desk (an incident's
 * alerts). A submission runs the routing stages in order, each a pure function:
 *
 *   name → route (the sinks' rules and the silences open now) → hold (the failures a platform
 *   incident holds from the sinks that wait for the incident) → enqueue
 *
 * and the enqueue stage is a commit of the project's outbox: the poll's own commit, so that its
 * alerts and the checkpoint that passes their operations are one write (`pollHook`); or one of
 * the submission's (`submit`), after which the sinks' lanes are woken for the project.
 */
import type { Clock } from "../../clock.js";
import type { Config, ResolvedSink } from "../../config/index.js";
import type { Alert, IncidentMark, OutboxEntry } from "../../store/index.js";
import type { AlertContext, NameLookup, PollOptions, RoutedAlerts } from "../../sync/index.js";
import { withNames } from "../rules/names.js";
import {
  alertsFrom,
  routeAlerts,
  type AlertHistory,
  type AlertRulesOptions,
  type OpenSilence,
  type SinkRoute,
} from "../rules/rules.js";
import { isActive } from "../rules/silence-window.js";
import type { IncidentLedger } from "./incident-ledger.js";

/** The silence name the alerts an incident holds are recorded under. */
export const INCIDENT_HOLD = "platform_incident";

/** What routing takes from the configuration: the sinks' rules, the silences, the incidents. */
export interface IntakeSettings {
  readonly routes: readonly SinkRoute[];
  /** The sinks that hold an incident's failures (`holdIncidentAlerts`). */
  readonly holding: ReadonlySet<string>;
  readonly silences: Config["silences"];
  readonly rules: AlertRulesOptions;
  /** Whether failures group into platform incidents (`incidents.enabled`). */
  readonly grouping: boolean;
}

/** The routing settings of a configuration; undefined with no sink (nothing is kept then). */
export function intakeSettings(
  config: Config,
  sinks: readonly ResolvedSink[],
): IntakeSettings | undefined {
  if (sinks.length === 0) return undefined;
  return {
    routes: sinks.map(({ config: s }) => ({ name: s.name, drop: s.drop, match: s.match })),
    holding: new Set(sinks.filter((s) => s.config.holdIncidentAlerts).map((s) => s.config.name)),
    silences: config.silences,
    rules: {
      cancelledIsFailure: config.alerts.cancelledIsFailure,
      retrying: config.alerts.retrying,
      recovered: config.alerts.recovered,
      linkTemplate: config.alerts.link,
    },
    grouping: config.incidents.enabled,
  };
}

/** Alerts submitted at `nowMs` (our wall clock: silences are calendar rules). */
export interface Submission {
  readonly alerts: readonly Alert[];
  readonly nowMs: number;
  /** What the project raised before (a poll's): a recovery follows its failure's sinks. */
  readonly history?: AlertHistory;
  /** The project's region, when known (a poll's): its failures may join an incident. */
  readonly regionId?: string | undefined;
}

/**
 * The enqueue stage of a submission of its own: commits the entries to the project's outbox,
 * resolving whether it committed.
 */
export type Enqueue = (entries: readonly OutboxEntry[], nowMs: number) => Promise<boolean>;

export interface IntakeOptions {
  readonly settings: IntakeSettings | undefined;
  /** Names beside ids, looked up as each alert is raised. */
  readonly names?: NameLookup | undefined;
  /** Decides which failures join a platform incident. */
  readonly ledger: IncidentLedger;
  /**
   * Adds entries to a watched project's outbox in one commit: resolves with those the outbox
   * had no room for, or undefined when nothing was committed (the project is not watched).
   */
  readonly addAlerts: (
    projectId: string,
    entries: readonly OutboxEntry[],
    nowMs: number,
  ) => Promise<readonly OutboxEntry[] | undefined>;
  /** The outbox of `projectId` gained alerts: the sinks' lanes look at it. */
  readonly wake: (projectId: string) => void;
  /** A full outbox had no room for `count` alerts of `projectId`. */
  readonly dropped: (projectId: string, count: number) => void;
  readonly clock: Clock;
}

const NOTHING: RoutedAlerts = { entries: [], silenced: [] };

export class AlertIntake {
  #settings: IntakeSettings | undefined;

  constructor(private readonly options: IntakeOptions) {
    this.#settings = options.settings;
  }

  /** A reload's sinks, silences and rules, from the next submission on. */
  applyConfig(config: Config, sinks: readonly ResolvedSink[]): void {
    this.#settings = intakeSettings(config, sinks);
  }

  /**
   * The poll's hook under the settings of now (a poll keeps those it started with): the alerts
   * of its transitions through the routing stages, for the poll's commit to enqueue. With no
   * sink there is no hook.
   */
  pollHook(): PollOptions["alertsFor"] {
    const settings = this.#settings;
    if (settings === undefined) return undefined;
    return (transitions, context: AlertContext) =>
      this.#route(settings, {
        alerts: alertsFrom(transitions, context.nowMs, settings.rules),
        nowMs: context.nowMs,
        history: context,
        regionId: context.regionId,
      });
  }

  /**
   * Routes alerts raised outside a poll and enqueues them: by `enqueue` (the incident desk's
   * commit, which carries its record too), or else in a commit of their own, skipped when no
   * sink takes them. Resolves whether the outbox was committed; the lanes are woken if it
   * gained alerts.
   */
  async submit(projectId: string, alerts: readonly Alert[], enqueue?: Enqueue): Promise<boolean> {
    const nowMs = this.options.clock.wall();
    const settings = this.#settings;
    const { entries } = settings === undefined ? NOTHING : this.#route(settings, { alerts, nowMs });
    const committed = await (enqueue ?? this.#ownCommit(projectId))(entries, nowMs);
    if (committed && entries.length > 0) this.options.wake(projectId);
    return committed;
  }

  /** The routing stages: name → route → hold. */
  #route(settings: IntakeSettings, submission: Submission): RoutedAlerts {
    if (submission.alerts.length === 0) return NOTHING;
    const alerts = submission.alerts.map((alert) => withNames(alert, this.options.names));
    const open = openSilences(settings.silences, submission.nowMs);
    const routed = routeAlerts(alerts, settings.routes, open, submission.nowMs, submission.history);
    if (!settings.grouping) return routed;
    const marks = alerts.flatMap((alert) => {
      const mark = this.options.ledger.consider(alert, submission.regionId);
      return mark === undefined ? [] : [mark];
    });
    return { ...held(routed, marks, settings.holding), incidentMarks: marks };
  }

  #ownCommit(projectId: string): Enqueue {
    return async (entries, nowMs) => {
      if (entries.length === 0) return false;
      const dropped = await this.options.addAlerts(projectId, entries, nowMs);
      if (dropped === undefined) return false;
      if (dropped.length > 0) this.options.dropped(projectId, dropped.length);
      return true;
    };
  }
}

/** The silences whose window is open at `nowMs`. */
function openSilences(silences: Config["silences"], nowMs: number): OpenSilence[] {
  return silences.filter((s) => isActive(s.window, nowMs));
}

/**
 * The hold stage: the failures that joined an incident held from the sinks in `holding`,
 * recorded as silenced there (so that their recoveries are held too), not sent.
 */
function held(
  routed: RoutedAlerts,
  marks: readonly IncidentMark[],
  holding: ReadonlySet<string>,
): RoutedAlerts {
  const joined = new Set(marks.filter((m) => m.incidentId !== undefined).map((m) => m.alertId));
  if (joined.size === 0 || holding.size === 0) return routed;
  const entries: OutboxEntry[] = [];
  const silenced = [...routed.silenced];
  for (const entry of routed.entries) {
    if (!joined.has(entry.alert.id)) {
      entries.push(entry);
      continue;
    }
    const pending = entry.pending.filter((sink) => !holding.has(sink));
    for (const sink of entry.pending.filter((s) => holding.has(s))) {
      silenced.push({ alert: entry.alert, sink, silence: INCIDENT_HOLD });
    }
    if (pending.length > 0) entries.push({ ...entry, pending });
  }
  return { entries, silenced };
}
