/**
 * A local HTTP receiver for tests of anything that posts somewhere (alert sinks, the notifier,
 * the daemon): node:http on 127.0.0.1, a random port. It records every request and answers from
 * a script: a queue of responses, each used once, then a default (200 with body `ok`, which is
 * also what Slack answers).
 *
 *   const receiver = await startReceiver();
 *   receiver.respondWith({ status: 429, headers: { "retry-after": "2" } }, { status: 500 });
 *   ... post to `${receiver.url}/hook` ...
 *   await receiver.waitFor((requests) => requests.length >= 3);
 *   await receiver.close();
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export interface ReceivedRequest {
  /** 0 for the first request since start (or `clear()`). */
  readonly index: number;
  readonly method: string;
  /** Path and query, as sent. */
  readonly path: string;
  /** Lower-case names, as node:http gives them. */
  readonly headers: IncomingHttpHeaders;
  readonly rawBody: Buffer;
  /** The body as UTF-8. */
  readonly text: string;
  /** The body parsed as JSON, or undefined when it is empty or not JSON. */
  readonly json: unknown;
  /** `Date.now()` when the whole body had arrived. */
  readonly receivedAtMs: number;
  /** The client's port: requests on one kept-alive connection share it. */
  readonly remotePort: number | undefined;
}

/** An answer. Every field is optional: `{}` is an empty 200. */
export interface ReplySpec {
  /** Default 200. */
  readonly status?: number;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as is (Content-Type `text/plain` unless `headers` say otherwise). */
  readonly body?: string | Uint8Array;
  /** Sent as JSON (Content-Type `application/json`); ignored when `body` is given. */
  readonly json?: unknown;
  /** Wait this long before answering at all (to test header timeouts). */
  readonly delayMs?: number;
  /** Send the status and headers, then wait this long before the body (body timeouts). */
  readonly bodyDelayMs?: number;
}

/** Destroy the connection without answering (after `delayMs`, default at once). */
export interface DropSpec {
  readonly drop: true;
  readonly delayMs?: number;
}

export type ResponseSpec = ReplySpec | DropSpec;

/** A fixed answer, or one chosen from the request. */
export type ResponseScript = ResponseSpec | ((request: ReceivedRequest) => ResponseSpec);

export interface ReceiverOptions {
  /** The answer when the queue is empty. Default `{ status: 200, body: "ok" }`. */
  readonly fallback?: ResponseScript;
}

export interface Receiver {
  /** `http://127.0.0.1:<port>`, no trailing slash: append any path. */
  readonly url: string;
  /** Every request so far, in arrival order (a live array). */
  readonly requests: readonly ReceivedRequest[];
  /** Queues answers for the next requests, in order, each used once. */
  respondWith(...responses: ResponseScript[]): void;
  /** Replaces the answer used when the queue is empty. */
  setFallback(response: ResponseScript): void;
  /** Answers still queued. */
  pending(): number;
  /**
   * Resolves with the requests once `predicate` holds for them (checked now and after each new
   * request); rejects after `timeoutMs` (default 5 s), saying how many requests came.
   */
  waitFor(
    predicate: (requests: readonly ReceivedRequest[]) => boolean,
    timeoutMs?: number,
  ): Promise<readonly ReceivedRequest[]>;
  /** Forgets the requests and the queued answers (the fallback stays). */
  clear(): void;
  /** Closes every connection (answers still waiting are dropped) and the server. */
  close(): Promise<void>;
}

const DEFAULT_FALLBACK: ResponseSpec = { status: 200, body: "ok" };

export async function startReceiver(options: ReceiverOptions = {}): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const queue: ResponseScript[] = [];
  let fallback: ResponseScript = options.fallback ?? DEFAULT_FALLBACK;
  const timers = new Set<NodeJS.Timeout>();
  const waiters = new Set<() => void>();
  const sockets = new Set<Socket>();
  let closed = false;

  const later = (ms: number, action: () => void): void => {
    if (ms <= 0) {
      action();
      return;
    }
    const timer = setTimeout(() => {
      timers.delete(timer);
      action();
    }, ms);
    timers.add(timer);
  };

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("error", () => undefined);
    req.on("end", () => {
      const rawBody = Buffer.concat(chunks);
      const text = rawBody.toString("utf8");
      const request: ReceivedRequest = {
        index: requests.length,
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        rawBody,
        text,
        json: parseJson(text),
        receivedAtMs: Date.now(),
        remotePort: req.socket.remotePort,
      };
      requests.push(request);
      for (const wake of [...waiters]) wake();
      const script = queue.shift() ?? fallback;
      const spec = typeof script === "function" ? script(request) : script;
      later(spec.delayMs ?? 0, () => {
        answer(res, spec, later);
      });
    });
  });
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    respondWith(...responses) {
      queue.push(...responses);
    },
    setFallback(response) {
      fallback = response;
    },
    pending: () => queue.length,
    waitFor(predicate, timeoutMs = 5000) {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!predicate(requests)) return;
          finish();
          resolve(requests);
        };
        const timer = setTimeout(() => {
          finish();
          reject(
            new Error(
              `receiver: condition not met within ${timeoutMs} ms (${requests.length} requests received)`,
            ),
          );
        }, timeoutMs);
        const finish = (): void => {
          clearTimeout(timer);
          waiters.delete(check);
        };
        waiters.add(check);
        check();
      });
    },
    clear() {
      requests.length = 0;
      queue.length = 0;
    },
    async close() {
      if (closed) return;
      closed = true;
      for (const timer of timers) clearTimeout(timer);
      timers.clear();
      const done = new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      for (const socket of sockets) socket.destroy();
      server.closeAllConnections();
      await done;
    },
  };
}

function answer(
  res: ServerResponse,
  spec: ResponseSpec,
  later: (ms: number, action: () => void) => void,
): void {
  if (res.destroyed || res.socket === null || res.socket.destroyed) return;
  if ("drop" in spec) {
    res.socket.destroy();
    return;
  }
  const headers: Record<string, string> = {};
  let body: string | Uint8Array = "";
  if (spec.body !== undefined) {
    body = spec.body;
    headers["content-type"] = "text/plain; charset=utf-8";
  } else if (spec.json !== undefined) {
    body = JSON.stringify(spec.json);
    headers["content-type"] = "application/json";
  }
  for (const [name, value] of Object.entries(spec.headers ?? {}))
    headers[name.toLowerCase()] = value;
  res.writeHead(spec.status ?? 200, headers);
  if (spec.bodyDelayMs === undefined || spec.bodyDelayMs <= 0) {
    res.end(body);
    return;
  }
  res.flushHeaders();
  later(spec.bodyDelayMs, () => {
    if (!res.destroyed) res.end(body);
  });
}

function parseJson(text: string): unknown {
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
