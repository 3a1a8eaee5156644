/**
 * The alert intake of a configuration, as the daemon builds it, over an outbox the test gives
 * (`addAlerts`, `wake`, `dropped`) and an incident ledger with no committed record.
 */
import {
  AlertIntake,
  IncidentLedger,
  incidentSettings,
  intakeSettings,
  type IntakeOptions,
} from "../../../src/alerts/index.js";
import { systemClock } from "../../../src/clock.js";
import type { Config, ResolvedSink } from "../../../src/config/index.js";

export function intakeOf(
  config: Config,
  sinks: readonly ResolvedSink[],
  outbox: Pick<IntakeOptions, "addAlerts" | "wake" | "dropped">,
): AlertIntake {
  return new AlertIntake({
    settings: intakeSettings(config, sinks),
    ledger: new IncidentLedger({
      settings: incidentSettings(config),
      projects: () => [],
      clock: systemClock,
    }),
    ...outbox,
    clock: systemClock,
  });
}
