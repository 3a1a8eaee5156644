/**
 * What the notifier needs of a sink: one delivery attempt's outcome, and the sink itself. The
 * alert record they carry is part of the state document (`store/alert-record.ts`).
 */
import type { Alert, FiringAlert } from "../../store/index.js";

/** One delivery attempt's outcome, as a sink reports it. */
export type SendResult =
  | { readonly ok: true }
  | {
      readonly ok: false;
      /** Bounded set of reasons, used as a metric label. */
      readonly reason: "client_error" | "server_error" | "rate_limited" | "timeout" | "network";
      /** Retrying cannot help (e.g. 400, 404): the alerts go to the dead letters. */
      readonly permanent: boolean;
      /** The receiver's `Retry-After`, when it sent one. */
      readonly retryAfterMs?: number;
      /** For logs: never contains the sink's URL or secret. */
      readonly detail: string;
      /**
       * A permanent failure's reason as the dead letters keep it, when the receiver said why in
       * its own words (PagerDuty's `message` and `errors`, redacted); `reason` otherwise.
       */
      readonly deadLetterReason?: string;
    };

/**
 * Where alerts go. A sink sends one batch (alerts of one project, grouped) per call and says
 * how it went; it never throws for a delivery failure. Secrets (URLs, signing keys) stay inside.
 */
export interface Sink {
  /** The name from the configuration (used in routing, metrics and logs). */
  readonly name: string;
  readonly kind: "slack" | "webhook" | "pagerduty" | "alertmanager";
  /** Most alerts one message may carry (Slack: 20 items, then "and N more"). */
  readonly maxBatch: number;
  /** Least time between two messages to this sink, in ms (Slack: one per second). */
  readonly minIntervalMs: number;
  /** `context` is what the sink may need of the alerts' project (its firing set). */
  send(alerts: readonly Alert[], signal: AbortSignal, context?: SendContext): Promise<SendResult>;
  /** A sink whose receiver forgets alerts that are not re-sent (Alertmanager). */
  readonly firing?: FiringKeeper;
  close(): Promise<void>;
}

/** What a sink is told of the project whose alerts it sends. */
export interface SendContext {
  /** The project's firing set (all sinks'). */
  readonly firing: readonly FiringAlert[];
}

/**
 * The firing set's keeper for a sink: the notifier adds what the sink acknowledged, and every
 * `resendIntervalMs` hands the sink its firing alerts to send again; an alert that has fired
 * for `firingForMs` without an end ends.
 */
export interface FiringKeeper {
  readonly resendIntervalMs: number;
  readonly firingForMs: number;
  /** Sends the firing alerts again, and the ended ones once, resolved. */
  refresh(firing: readonly FiringAlert[], signal: AbortSignal): Promise<SendResult>;
}
