/**
 * The Alertmanager sink: posts alerts to `POST /api/v2/alerts` of every configured peer (an HA
 * pair gets every alert, as Prometheus sends to every peer). A delivery counts once one peer
 * took it: the firing set is re-sent to all of them every interval, so a peer that was down
 * gets every firing alert within one interval of coming back. Basic-auth credentials or a
 * bearer token come from the environment and never leave this module.
 */
import type { SinkAuth } from "../../config/index.js";
import type { Alert, FiringAlert } from "../../store/index.js";
import type { FiringKeeper, SendContext, SendResult, Sink } from "./sink.js";
import {
  deliveryPayload,
  refreshPayload,
  type AlertmanagerPayloadOptions,
  type PostableAlert,
} from "./alertmanager-payload.js";
import { closedResult, Delivery } from "./delivery.js";
import {
  checkCommonOptions,
  checkPositiveInteger,
  parseTargetUrl,
  SinkConfigError,
  type CommonSinkOptions,
} from "./options.js";
import { createRedactor, urlSecrets } from "../../config/index.js";

export const ALERTMANAGER_DEFAULT_MAX_BATCH = 100;

export type AlertmanagerAuth = SinkAuth;

/** `maxBatch`: alerts in one post (default 100); `timeoutMs` is per peer. */
export interface AlertmanagerSinkOptions extends CommonSinkOptions {
  /** Each peer's base address (the alerts go to `<url>/api/v2/alerts`). */
  readonly urls: readonly string[];
  readonly auth?: AlertmanagerAuth | undefined;
  readonly payload: AlertmanagerPayloadOptions;
  /** A failure that is never retried fires this long, then ends. */
  readonly firingForMs: number;
}

export function createAlertmanagerSink(options: AlertmanagerSinkOptions): Sink {
  const { payload } = options;
  const checked = checkCommonOptions(options, ALERTMANAGER_DEFAULT_MAX_BATCH);
  const { name, maxBatch, now } = checked;
  if (options.urls.length === 0) throw new SinkConfigError(name, "urls must name at least one");
  checkPositiveInteger(name, "resendIntervalMs", payload.resendIntervalMs);
  checkPositiveInteger(name, "firingForMs", options.firingForMs);
  const headers: Record<string, string> = { "content-type": "application/json" };
  const secrets: string[] = [...options.urls];
  if (options.auth?.kind === "basic") {
    const { username, password } = options.auth;
    headers.authorization = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
    secrets.push(password, headers.authorization);
  } else if (options.auth?.kind === "bearer") {
    headers.authorization = `Bearer ${options.auth.token}`;
    secrets.push(options.auth.token);
  }
  const peers = options.urls.map((raw, i) => {
    const base = parseTargetUrl(name, `urls[${String(i)}]`, raw);
    secrets.push(...urlSecrets(base));
    return new URL(`${base.pathname.replace(/\/+$/, "")}/api/v2/alerts`, base);
  });
  const redact = createRedactor(secrets);
  const deliveries = peers.map(
    (url) =>
      new Delivery({
        ...checked.transport,
        url,
        flavour: "webhook",
        redact,
      }),
  );

  /** Posts to every peer; succeeds once one took it. */
  const post = async (alerts: readonly PostableAlert[], signal: AbortSignal) => {
    if (deliveries.some((d) => d.closed)) return closedResult();
    if (alerts.length === 0) return { ok: true } as const;
    const body = JSON.stringify(alerts);
    const results = await Promise.all(deliveries.map((d) => d.post(headers, body, signal)));
    return combine(results);
  };

  const keeper: FiringKeeper = {
    resendIntervalMs: payload.resendIntervalMs,
    firingForMs: options.firingForMs,
    refresh: (firing: readonly FiringAlert[], signal: AbortSignal) =>
      post(refreshPayload(firing, payload, now()), signal),
  };
  return {
    name,
    kind: "alertmanager",
    maxBatch,
    minIntervalMs: 0,
    firing: keeper,
    send(alerts: readonly Alert[], signal: AbortSignal, context?: SendContext) {
      return post(deliveryPayload(alerts, context?.firing ?? [], payload, now()), signal);
    },
    async close() {
      await Promise.all(deliveries.map((d) => d.close()));
    },
  };
}

/**
 * One outcome for the peers: delivered if any peer took it; otherwise the first failure, which
 * is permanent only if every peer refused for good, with the longest `Retry-After` asked for.
 */
function combine(results: readonly SendResult[]): SendResult {
  const failures: Extract<SendResult, { ok: false }>[] = [];
  for (const result of results) {
    if (result.ok) return result;
    failures.push(result);
  }
  const [first] = failures;
  if (first === undefined) return { ok: true };
  const retryAfter = Math.max(0, ...failures.map((f) => f.retryAfterMs ?? 0));
  return {
    ...first,
    permanent: failures.every((f) => f.permanent),
    ...(retryAfter > 0 ? { retryAfterMs: retryAfter } : {}),
    detail:
      failures.length > 1
        ? `every peer failed: ${failures.map((f) => f.detail).join("; ")}`
        : first.detail,
  };
}
