/**
 * Loads the modules that load OpenTelemetry's packages (`wire/`), at the first export: a process
 * with no export on never loads them (about 20 MB of code kept out of memory).
 */
import type * as Wire from "./wire/index.js";

export function loadWire(): Promise<typeof Wire> {
  return import("./wire/index.js");
}
