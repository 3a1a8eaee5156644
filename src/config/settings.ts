import type { ResolvedAccount } from "./accounts.js";
import type { ResolvedComputes } from "./computes.js";
import type { ResolvedOtlp } from "./otlp.js";
import type { Config } from "./schema.js";
import type { ResolvedSink } from "./sinks.js";
import type { WebSecurity } from "./web-config.js";

/** Everything the exporter runs with, read from the file, the environment and the flags. */
export interface Settings {
  readonly config: Config;
  /** The accounts with their API keys (one, `default`, for the single-key settings). */
  readonly accounts: ResolvedAccount[];
  readonly sinks: ResolvedSink[];
  /** The web configuration file's TLS and users, when `web.configFile` names one. */
  readonly web: WebSecurity | undefined;
  /** How each account's computes are probed, with the passwords; absent: none is probed. */
  readonly computes?: ResolvedComputes;
  /** The OpenTelemetry export's targets, with the headers; absent: resolved from the environment. */
  readonly otlp?: ResolvedOtlp;
}
