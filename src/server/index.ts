/** HTTP: `/metrics`, `/healthz`, `/readyz` and the status page. No business logic. */
export * from "./http-server.js";
