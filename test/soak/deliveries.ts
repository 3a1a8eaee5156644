/**
 * What a webhook receiver got, read as the soaks count it: each alert's deliveries (requests
 * answered 2xx), the failures among them, and the other alerts.
 */

/** A request the receiver recorded, as far as the counting needs it. */
export interface WebhookRequest {
  readonly index: number;
  readonly json: unknown;
}

export interface WebhookAlert {
  readonly id: string;
  readonly kind: string;
  readonly operation_id: string;
  readonly status: string;
}

export interface Delivered<R extends WebhookRequest> {
  /** Failure alerts delivered, as `op status`. */
  readonly failures: Set<string>;
  /** The ids of the failure alerts delivered. */
  readonly failureIds: Set<string>;
  /** Each alert id's deliveries, in order. */
  readonly deliveries: Map<string, R[]>;
  /** Other alerts (recovered, stuck) delivered. */
  readonly other: number;
}

/** The alerts of a webhook request's body (none when it is not one). */
export function webhookAlerts(request: WebhookRequest): readonly WebhookAlert[] {
  const body = request.json as { alerts?: WebhookAlert[] } | undefined;
  return body?.alerts ?? [];
}

/** From the receiver's requests, those `answered2xx` says were delivered. */
export function deliveredAlerts<R extends WebhookRequest>(
  requests: readonly R[],
  answered2xx: (request: R) => boolean,
): Delivered<R> {
  const failures = new Set<string>();
  const failureIds = new Set<string>();
  const deliveries = new Map<string, R[]>();
  let other = 0;
  for (const request of requests) {
    if (!answered2xx(request)) continue;
    for (const alert of webhookAlerts(request)) {
      const seen = deliveries.get(alert.id) ?? [];
      seen.push(request);
      deliveries.set(alert.id, seen);
      if (alert.kind === "operation_failed") {
        failures.add(`${alert.operation_id} ${alert.status}`);
        failureIds.add(alert.id);
      } else if (seen.length === 1) other += 1;
    }
  }
  return { failures, failureIds, deliveries, other };
}
