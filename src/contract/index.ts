/**
 * The wire contract of the control-plane API (seed `control-plane-api.md`, a subset of the real
 * API v2): zod schemas of what travels over HTTP, the enumerations and the fixed tables.
 *
 * This is the only code that the exporter (`src/api` and up) and the simulator share, so that a
 * bug in either cannot hide on both sides of the wire at once. It holds no behaviour.
 */
export * from "./common.js";
export * from "./operation.js";
export * from "./endpoint.js";
export * from "./project.js";
export * from "./branch.js";

/** The path prefix under which every call of the API lives. */
export const API_BASE_PATH = "/api/v2";
