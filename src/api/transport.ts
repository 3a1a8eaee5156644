import type { IncomingHttpHeaders } from "node:http";
import { Pool, request } from "undici";
import type { HttpMethod } from "./routes.js";

export interface TransportOptions {
  /** Scheme, host and port of the API. */
  readonly origin: string;
  /** Sockets kept open to the origin (the client's concurrency cap, so none wait for one). */
  readonly connections: number;
  readonly connectTimeoutMs: number;
}

export interface SendOptions {
  readonly method: HttpMethod;
  /** Path and query, starting with `/`. */
  readonly path: string;
  readonly headers: Record<string, string>;
  readonly body: string | undefined;
  /** Longest wait for the response headers. */
  readonly headersTimeoutMs: number;
  /** Longest silence between two chunks of the response body. */
  readonly bodyTimeoutMs: number;
  /** Longest time for the whole exchange, from sending to the last byte of the body. */
  readonly deadlineMs: number;
  /** Largest response body accepted, in bytes. */
  readonly maxResponseBytes: number;
  readonly signal: AbortSignal | undefined;
}

/**
 * A response whose body has been read in full. The body stays bytes (held outside the JavaScript
 * heap) until it is read: an answer may wait for its turn (`turns.ts`), and text waiting there
 * would outlive the young generation and be copied by each collection that meets it.
 */
export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly body: Buffer;
}

/** The exchange outlasted its deadline (a server that drips its answer, or never ends it). */
export class DeadlineExceededError extends Error {
  override readonly name = "DeadlineExceededError";
  readonly code = "DEADLINE_EXCEEDED";
  constructor(deadlineMs: number) {
    super(`the request did not complete within its deadline of ${deadlineMs} ms`);
  }
}

/** The answer is larger than the client accepts; it was not read further. */
export class ResponseTooLargeError extends Error {
  override readonly name = "ResponseTooLargeError";
  readonly code = "RESPONSE_TOO_LARGE";
  constructor(
    readonly limitBytes: number,
    announcedBytes: number | undefined,
  ) {
    super(
      announcedBytes === undefined
        ? `the response body exceeds the limit of ${limitBytes} bytes`
        : `the response body of ${announcedBytes} bytes exceeds the limit of ${limitBytes} bytes`,
    );
  }
}

/**
 * One keep-alive connection pool to the API's origin and one way to use it: send a request and
 * read the whole answer, within a deadline for the whole exchange and a cap on the body's size
 * (undici's own timeouts only bound silences, so a body that drips a byte at a time would
 * otherwise hold its request, and its slot, forever). Errors from undici (connection refused or
 * reset, timeouts, a body cut short) propagate unchanged, as do `DeadlineExceededError` and
 * `ResponseTooLargeError`; deciding what they mean is not this module's job.
 */
export class Transport {
  readonly #origin: string;
  readonly #pool: Pool;

  constructor(options: TransportOptions) {
    this.#origin = options.origin;
    // Idle sockets keep undici's default lifetime, which follows the server's Keep-Alive hint:
    // a longer one risks sending on a socket the server is just closing (fatal for a POST).
    this.#pool = new Pool(options.origin, {
      connections: options.connections,
      connect: { timeout: options.connectTimeoutMs },
    });
  }

  async send(options: SendOptions): Promise<RawResponse> {
    // One controller for the deadline and the caller's signal, which it follows while the
    // exchange lasts (`AbortSignal.any` would tie a composite signal, and the maps that follow
    // it, to the caller's long-lived one for each request).
    const deadline = new AbortController();
    const timer = setTimeout(() => {
      deadline.abort(new DeadlineExceededError(options.deadlineMs));
    }, options.deadlineMs);
    const caller = options.signal;
    const follow = (): void => {
      deadline.abort(caller?.reason);
    };
    if (caller?.aborted === true) follow();
    else caller?.addEventListener("abort", follow, { once: true });
    const { signal } = deadline;
    try {
      const response = await request(new URL(options.path, this.#origin), {
        dispatcher: this.#pool,
        method: options.method,
        headers: options.headers,
        body: options.body ?? null,
        headersTimeout: options.headersTimeoutMs,
        bodyTimeout: options.bodyTimeoutMs,
        signal,
      });
      const body = await readCapped(response.body, response.headers, options.maxResponseBytes);
      return { status: response.statusCode, headers: response.headers, body };
    } catch (error) {
      // The caller's own abort wins; otherwise the deadline's error, not undici's wrapper of it.
      if (caller?.aborted !== true && signal.aborted) {
        throw signal.reason as DeadlineExceededError;
      }
      throw error;
    } finally {
      clearTimeout(timer);
      caller?.removeEventListener("abort", follow);
    }
  }

  /** Waits for requests in flight, then closes the sockets. */
  close(): Promise<void> {
    return this.#pool.close();
  }
}

interface Body extends AsyncIterable<Buffer> {
  destroy(error?: Error): unknown;
}

/**
 * Reads a body up to `limit` bytes: refused at once when its Content-Length says it is larger,
 * and abandoned (the connection closed) as soon as the bytes read pass the limit.
 */
async function readCapped(
  body: Body,
  headers: IncomingHttpHeaders,
  limit: number,
): Promise<Buffer> {
  const announced = Number(headers["content-length"]);
  if (Number.isFinite(announced) && announced > limit) {
    const error = new ResponseTooLargeError(limit, announced);
    body.destroy(error);
    throw error;
  }
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit) {
      const error = new ResponseTooLargeError(limit, undefined);
      body.destroy(error);
      throw error;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, size);
}
