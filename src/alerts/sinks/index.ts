/**
 * Alert sinks: where the notifier delivers batches of alerts (Slack, the generic webhook,
 * PagerDuty, Alertmanager), and how each renders a platform incident (`incident.ts` holds what
 * they share). Each sink makes one attempt per `send` (PagerDuty: one request per alert, in
 * order) and reports it as a `SendResult` (see `classify.ts` for the table); the notifier
 * batches, paces, retries and dead-letters. Secrets (webhook URLs, signing keys, custom header
 * values, routing keys) stay inside the sinks, which never log.
 */
export {
  createSlackSink,
  SLACK_DEFAULT_MAX_BATCH,
  SLACK_MIN_INTERVAL_MS,
  type SlackSinkOptions,
} from "./slack-sink.js";
export {
  createWebhookSink,
  WEBHOOK_DEFAULT_MAX_BATCH,
  type WebhookSinkOptions,
} from "./webhook-sink.js";
export {
  ALERTMANAGER_DEFAULT_MAX_BATCH,
  createAlertmanagerSink,
  type AlertmanagerSinkOptions,
} from "./alertmanager-sink.js";
export {
  ALERT_NAMES,
  deliveryPayload,
  MAX_ERROR_CLASS_LABEL,
  refreshPayload,
  type AlertmanagerPayloadOptions,
  type PostableAlert,
} from "./alertmanager-payload.js";
export {
  createPagerDutySink,
  PAGERDUTY_DEFAULT_MAX_BATCH,
  type PagerDutySinkOptions,
} from "./pagerduty-sink.js";
export {
  incidentDedupKey,
  pagerDutyEvent,
  pagerDutySummary,
  PAGERDUTY_LIMITS,
  type IncidentDetails,
  type PagerDutyEvent,
  type PagerDutyResolve,
  type PagerDutySeverities,
  type PagerDutyTrigger,
} from "./pagerduty-event.js";
export { SinkConfigError } from "./options.js";
export {
  classifyErrorCode,
  classifyOutcome,
  classifyPagerDutyReply,
  classifyReply,
  classifySlackReply,
  DEFAULT_MAX_RETRY_AFTER_MS,
  SLACK_PERMANENT_ERRORS,
  type ClassifyOptions,
  type FailureReason,
  type HttpOutcome,
  type ReplyFlavour,
  type ReplyHeaders,
} from "./classify.js";
export {
  KIND_STYLE,
  renderSlackMessage,
  SLACK_LIMITS,
  slackAlerts,
  type SlackBlock,
  type SlackMessage,
  type SlackRenderOptions,
} from "./slack-message.js";
export {
  groupKey,
  idempotencyKey,
  RESERVED_HEADER_PREFIX,
  RESERVED_HEADERS,
  signature,
  toWebhookAlert,
  toWebhookIncident,
  WEBHOOK_HEADERS,
  WEBHOOK_SCHEMA_VERSION,
  webhookAlertSchema,
  webhookPayload,
  webhookPayloadSchema,
  webhookRequest,
  type WebhookAlert,
  type WebhookIncident,
  type WebhookPayload,
  type WebhookRequest,
} from "./webhook-payload.js";
