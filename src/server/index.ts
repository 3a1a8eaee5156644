/**
 * HTTP: `/metrics`, `/healthz`, `/readyz`, the routes it is given (the status page), TLS and
 * basic auth from the web configuration. No business logic.
 */
export * from "./http-server.js";
