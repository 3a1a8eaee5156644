/**
 * What the notifier needs of a sink: one delivery attempt's outcome, and the sink itself. The
 * alert record they carry is part of the state document (`store/alert-record.ts`).
 */
import type { Alert } from "../store/index.js";

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
    };

/**
 * Where alerts go. A sink sends one batch (alerts of one project, grouped) per call and says
 * how it went; it never throws for a delivery failure. Secrets (URLs, signing keys) stay inside.
 */
export interface Sink {
  /** The name from the configuration (used in routing, metrics and logs). */
  readonly name: string;
  readonly kind: "slack" | "webhook";
  /** Most alerts one message may carry (Slack: 20 items, then "and N more"). */
  readonly maxBatch: number;
  /** Least time between two messages to this sink, in ms (Slack: one per second). */
  readonly minIntervalMs: number;
  send(alerts: readonly Alert[], signal: AbortSignal): Promise<SendResult>;
  close(): Promise<void>;
}
