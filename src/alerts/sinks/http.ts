/**
 * One POST with a deadline, over a keep-alive undici dispatcher, turned into an `HttpOutcome`.
 * It never throws: every error becomes an outcome carrying only an error code (undici's
 * messages can name the host and port, and its errors hold request state).
 */
import { Agent, request, type Dispatcher } from "undici";
import { errorCode, type HttpOutcome } from "./classify.js";

/** The most of a reply body that is read (Slack's answer is a word; the rest is discarded). */
export const MAX_REPLY_BYTES = 8 * 1024;

export interface PostOptions {
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
  /** Deadline for the whole attempt: connect, send, headers and the (bounded) body. */
  readonly timeoutMs: number;
  readonly signal: AbortSignal;
}

/**
 * The dispatcher a sink owns: keep-alive sockets to its one destination, bounded connect,
 * header and body timeouts. Idle sockets keep undici's default lifetime (which follows the
 * server's Keep-Alive hint): a longer one risks a POST on a socket the server is closing.
 */
export function createSinkAgent(timeoutMs: number): Agent {
  return new Agent({
    connections: 4,
    connect: { timeout: Math.min(timeoutMs, 10_000) },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });
}

export async function postOnce(dispatcher: Dispatcher, options: PostOptions): Promise<HttpOutcome> {
  const { signal, timeoutMs } = options;
  const deadline = new AbortController();
  const attempt = new AbortController();
  const timer = setTimeout(() => {
    deadline.abort();
    attempt.abort();
  }, timeoutMs);
  const onAbort = (): void => {
    attempt.abort();
  };
  signal.addEventListener("abort", onAbort, { once: true });
  if (signal.aborted) attempt.abort();
  try {
    const response = await request(options.url, {
      dispatcher,
      method: "POST",
      headers: options.headers,
      body: options.body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: attempt.signal,
    });
    const body = await readBounded(response.body, MAX_REPLY_BYTES);
    return { type: "response", status: response.statusCode, headers: response.headers, body };
  } catch (error) {
    if (signal.aborted) return { type: "aborted" };
    if (deadline.signal.aborted) return { type: "deadline", timeoutMs };
    return { type: "error", code: errorCode(error) };
  } finally {
    clearTimeout(timer);
    signal.removeEventListener("abort", onAbort);
  }
}

/** Reads at most `maxBytes` of a body, then drops the rest (which frees the socket). */
async function readBounded(body: AsyncIterable<unknown>, maxBytes: number): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const bytes = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(bytes.subarray(0, maxBytes - size));
    size += Math.min(bytes.length, maxBytes - size);
    if (size >= maxBytes) break;
  }
  return Buffer.concat(chunks).toString("utf8");
}
