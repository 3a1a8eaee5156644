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
  /** The ids each failure (`op status`) was delivered under. */
  readonly idsByFailure: Map<string, Set<string>>;
  /** Each alert id's deliveries, in order. */
  readonly deliveries: Map<string, R[]>;
  /** Other alerts (recovered, stuck) delivered. */
  readonly other: number;
  /** Alerts delivered, by kind (each alert once). */
  readonly byKind: Record<string, number>;
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
  const idsByFailure = new Map<string, Set<string>>();
  const deliveries = new Map<string, R[]>();
  let other = 0;
  const byKind: Record<string, number> = {};
  for (const request of requests) {
    if (!answered2xx(request)) continue;
    for (const alert of webhookAlerts(request)) {
      const seen = deliveries.get(alert.id) ?? [];
      seen.push(request);
      deliveries.set(alert.id, seen);
      if (seen.length === 1) byKind[alert.kind] = (byKind[alert.kind] ?? 0) + 1;
      if (alert.kind === "operation_failed") {
        const failure = `${alert.operation_id} ${alert.status}`;
        failures.add(failure);
        idsByFailure.set(failure, (idsByFailure.get(failure) ?? new Set()).add(alert.id));
      } else if (seen.length === 1) other += 1;
    }
  }
  return { failures, idsByFailure, deliveries, other, byKind };
}
