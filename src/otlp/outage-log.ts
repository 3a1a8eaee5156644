/**
 * The log of one signal's exports, a line per outage rather than per failed export: a warning
 * when exports start failing, an info line when one succeeds again. A collector down for an
 * hour costs two lines, not one per push. The lines name the collector by `displayUrl` (scheme,
 * host and path: never credentials, a query or the headers) and the failure by its bounded
 * reason and the collector's status and answer, cleared of the target's secrets (a collector may
 * echo a token back in its refusal).
 */
import { displayUrl, type OtlpTarget } from "../config/index.js";
import type { Logger } from "../logger.js";
import { withoutSecrets } from "./redaction.js";
import type { ExportOutcome } from "./wire/transport.js";

type Failure = Extract<ExportOutcome, { ok: false }>;

export class OutageLog {
  readonly #logger: Logger;
  readonly #target: OtlpTarget;
  readonly #fields: { readonly signal: string; readonly collector: string };
  /** Failed exports since the last success; 0 while exports succeed. */
  #failures = 0;

  constructor(logger: Logger, signal: "traces" | "metrics", target: OtlpTarget) {
    this.#logger = logger;
    this.#target = target;
    this.#fields = { signal, collector: displayUrl(target.url) };
  }

  /** Whether the last export failed. */
  get failing(): boolean {
    return this.#failures > 0;
  }

  failed(failure: Failure): void {
    this.#failures += 1;
    if (this.#failures > 1) return;
    this.#logger.warn(
      {
        ...this.#fields,
        reason: failure.reason,
        detail: withoutSecrets(failure.detail, this.#target),
      },
      `exporting ${this.#fields.signal} over OTLP fails; logged again when it works`,
    );
  }

  succeeded(): void {
    if (this.#failures === 0) return;
    this.#logger.info(
      { ...this.#fields, failedExports: this.#failures },
      `exporting ${this.#fields.signal} over OTLP works again`,
    );
    this.#failures = 0;
  }
}
