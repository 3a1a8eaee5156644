/**
 * An alert: what a person is told about an operation. Built from the sync engine's transitions
 * by the rules in `rules.ts`, kept in the durable outbox until every sink has it, and rendered
 * by each sink in its own format.
 */
import { z } from "zod";

export const ALERT_KINDS = [
  "operation_failed",
  "operation_stuck",
  "operation_retrying",
  "operation_recovered",
] as const;
export type AlertKind = (typeof ALERT_KINDS)[number];

const optionalString = z.string().optional();

/** The alert as stored in the outbox and sent to sinks (times are ISO 8601 strings). */
export const alertSchema = z.object({
  /** Stable: the same transition of the same operation always yields the same id. */
  id: z.string(),
  kind: z.enum(ALERT_KINDS),
  projectId: z.string(),
  operationId: z.string(),
  branchId: optionalString,
  endpointId: optionalString,
  action: z.string(),
  status: z.string(),
  failuresCount: z.number().int().nonnegative(),
  /** The operation's error text (failed and error statuses). */
  error: optionalString,
  createdAt: z.string(),
  updatedAt: z.string(),
  durationSeconds: z.number().nonnegative(),
  /** When the exporter noticed the transition. */
  detectedAt: z.string(),
  /** A link for people, from the configured template (e.g. the console's operations page). */
  link: optionalString,
  /** For a recovery: the id of the failure (or stuck) alert it resolves. */
  resolves: optionalString,
});
export type Alert = z.infer<typeof alertSchema>;

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
