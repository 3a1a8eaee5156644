/**
 * A simulator and an API client of it for the tests of a file or a `describe` block, closed
 * after them: `clientFor` makes one attempt per call, so that an injected fault fails the poll
 * instead of being retried away.
 */
import type { ApiClient } from "../../src/api/index.js";
import type { SimulatorOptions } from "../../src/simulator/index.js";
import { simulatorSuite, type WithSimulator } from "../support/simulator-suite.js";
import { clientFor } from "./support.js";

export function simulatorAndApiClient(
  use: (fixture: WithSimulator<{ client: ApiClient }>) => void,
  simulator: Partial<SimulatorOptions> = {},
): void {
  simulatorSuite((t) => ({ client: clientFor(t) }), use, {
    simulator,
    close: (f) => f.client.close(),
  });
}
