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
  readonly signal: AbortSignal | undefined;
}

/** A response whose body has been read in full. */
export interface RawResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  readonly bodyText: string;
}

/**
 * One keep-alive connection pool to the API's origin and one way to use it: send a request and
 * read the whole answer. Errors from undici (connection refused or reset, timeouts, a body cut
 * short) propagate unchanged; deciding what they mean is not this module's job.
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
    const response = await request(new URL(options.path, this.#origin), {
      dispatcher: this.#pool,
      method: options.method,
      headers: options.headers,
      body: options.body ?? null,
      headersTimeout: options.headersTimeoutMs,
      bodyTimeout: options.bodyTimeoutMs,
      signal: options.signal ?? null,
    });
    const bodyText = await response.body.text();
    return { status: response.statusCode, headers: response.headers, bodyText };
  }

  /** Waits for requests in flight, then closes the sockets. */
  close(): Promise<void> {
    return this.#pool.close();
  }
}
