/** HTTP: `/metrics`, `/healthz`, `/readyz` and the status page. No business logic. */
export * from "./http-server.js";
export * from "./status-page.js";
export * from "./status-page-render.js";
export * from "./status-page-view.js";
