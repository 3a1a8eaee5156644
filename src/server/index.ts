/**
 * HTTP: `/metrics`, `/healthz`, `/readyz`, the routes it is given (the status page, the nudge),
 * TLS and basic auth from the web configuration. No business logic.
 */
export * from "./http-server.js";
export { nudgeRoute } from "./nudge-route.js";
