/**
 * Loads the modules that load OpenTelemetry's packages (`wire/`), at the first export: a process
 * with no export on never loads them (docs/performance.md measures what they cost once loaded).
 */
import type * as Wire from "./wire/index.js";

export function loadWire(): Promise<typeof Wire> {
  return import("./wire/index.js");
}
