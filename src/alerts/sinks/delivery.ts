/**
 * What the sinks share: the dispatcher they own (or borrow), one attempt per `send`, the
 * classification, and the redaction of whatever goes back to the notifier.
 */
import type { Dispatcher } from "undici";
import type { SendResult } from "./sink.js";
import { classifyOutcome, type ReplyFlavour } from "./classify.js";
import { createSinkAgent, postOnce } from "./http.js";
import type { Redactor } from "../../config/index.js";

export interface DeliveryOptions {
  readonly url: URL;
  readonly flavour: ReplyFlavour;
  readonly timeoutMs: number;
  /** Borrowed (tests, a shared proxy agent): not closed with the sink. */
  readonly dispatcher: Dispatcher | undefined;
  readonly now: () => number;
  readonly maxRetryAfterMs: number | undefined;
  readonly redact: Redactor;
}

export class Delivery {
  readonly #options: DeliveryOptions;
  readonly #dispatcher: Dispatcher;
  readonly #owned: boolean;
  #closed = false;

  constructor(options: DeliveryOptions) {
    this.#options = options;
    this.#owned = options.dispatcher === undefined;
    this.#dispatcher = options.dispatcher ?? createSinkAgent(options.timeoutMs);
  }

  get closed(): boolean {
    return this.#closed;
  }

  /** One POST; never throws. */
  async post(
    headers: Readonly<Record<string, string>>,
    body: string,
    signal: AbortSignal,
  ): Promise<SendResult> {
    if (this.#closed) return closedResult();
    const outcome = await postOnce(this.#dispatcher, {
      url: this.#options.url,
      headers,
      body,
      timeoutMs: this.#options.timeoutMs,
      signal,
    });
    const result = classifyOutcome(outcome, this.#options.flavour, {
      nowMs: this.#options.now(),
      maxRetryAfterMs: this.#options.maxRetryAfterMs,
    });
    return this.redacted(result);
  }

  redacted(result: SendResult): SendResult {
    if (result.ok) return result;
    const { redact } = this.#options;
    return result.deadLetterReason === undefined
      ? { ...result, detail: redact(result.detail) }
      : {
          ...result,
          detail: redact(result.detail),
          deadLetterReason: redact(result.deadLetterReason),
        };
  }

  /** Waits for requests in flight, then closes the sockets; idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    if (this.#owned) await this.#dispatcher.close();
  }
}

export function closedResult(): SendResult {
  return { ok: false, reason: "network", permanent: false, detail: "sink closed" };
}

export function abortedResult(): SendResult {
  return { ok: false, reason: "timeout", permanent: false, detail: "aborted" };
}
