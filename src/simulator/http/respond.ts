import type { ServerResponse } from "node:http";
import type { Reply } from "./request.js";

/**
 * How the answer travels: intact; as malformed JSON (a strict prefix of the real body, which
 * no JSON parser accepts, with a matching Content-Length); truncated (the full body's
 * Content-Length, half the body, then the connection is closed); dripped (status and headers
 * at once, then the body `bytes` at a time, one chunk every `intervalMs`); or oversized (the
 * body padded to at least `sizeBytes`, still valid JSON, streamed).
 */
export type Delivery =
  | "intact"
  | "malformed"
  | "truncated"
  | { readonly kind: "drip"; readonly bytes: number; readonly intervalMs: number }
  | { readonly kind: "oversized"; readonly sizeBytes: number };

/** The top-level field that pads an oversized object body. */
export const PADDING_FIELD = "sim_padding";

/** Piece of padding written at a time (reused: nothing the size of the body is built). */
const PADDING_CHUNK = Buffer.alloc(64 * 1024, "x");

/**
 * Responses still being streamed (drip, oversized), so that closing the simulator can cut
 * them instead of waiting: a dripping body can take hours.
 */
export class StreamTracker {
  private readonly open = new Set<ServerResponse>();

  get size(): number {
    return this.open.size;
  }

  track(res: ServerResponse): void {
    this.open.add(res);
    res.once("close", () => this.open.delete(res));
  }

  /** Destroys every stream's connection. */
  destroyAll(): void {
    for (const res of this.open) res.destroy();
    this.open.clear();
  }
}

export function sendReply(
  res: ServerResponse,
  reply: Reply,
  delivery: Delivery = "intact",
  streams?: StreamTracker,
): void {
  const headers: Record<string, string | number> = { ...reply.headers };
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers);
    res.end();
    return;
  }
  const text = JSON.stringify(reply.body);
  const body = Buffer.from(text, "utf8");
  headers["Content-Type"] = "application/json";
  const half = body.subarray(0, Math.max(1, Math.floor(body.length / 2)));
  if (typeof delivery === "object") {
    // A client that goes away mid-stream makes late writes fail: nothing to report.
    res.on("error", () => undefined);
    streams?.track(res);
    if (delivery.kind === "drip") drip(res, reply.status, headers, body, delivery);
    else streamOversized(res, reply.status, headers, text, delivery.sizeBytes);
    return;
  }
  switch (delivery) {
    case "intact":
      headers["Content-Length"] = body.length;
      res.writeHead(reply.status, headers);
      res.end(body);
      return;
    case "malformed":
      headers["Content-Length"] = half.length;
      res.writeHead(reply.status, headers);
      res.end(half);
      return;
    case "truncated":
      headers["Content-Length"] = body.length;
      res.writeHead(reply.status, headers);
      res.write(half, () => {
        res.destroy();
      });
      return;
  }
}

/**
 * Status and headers (with the true Content-Length) at once, then the body `bytes` at a time:
 * the first chunk right away, each next one `intervalMs` later. Stops, timer included, as soon
 * as the connection closes.
 */
function drip(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | number>,
  body: Buffer,
  pace: { readonly bytes: number; readonly intervalMs: number },
): void {
  let timer: NodeJS.Timeout | undefined;
  let offset = 0;
  res.once("close", () => {
    clearTimeout(timer);
    timer = undefined;
  });
  headers["Content-Length"] = body.length;
  res.writeHead(status, headers);
  res.flushHeaders();
  const step = (): void => {
    timer = undefined;
    if (res.destroyed || res.writableEnded) return;
    const chunk = body.subarray(offset, offset + pace.bytes);
    offset += chunk.length;
    if (offset >= body.length) {
      res.end(chunk);
      return;
    }
    res.write(chunk);
    timer = setTimeout(step, pace.intervalMs);
  };
  step();
}

/**
 * The real body padded to at least `sizeBytes`, with a true Content-Length: an object gets one
 * more top-level field (`sim_padding`) holding a string of `x`; any other value trailing
 * spaces. Streamed in 64 KiB pieces, following the client's pace; stops when it goes away.
 */
function streamOversized(
  res: ServerResponse,
  status: number,
  headers: Record<string, string | number>,
  text: string,
  sizeBytes: number,
): void {
  const isObject = text.startsWith("{");
  const head = !isObject
    ? text
    : text === "{}"
      ? `{"${PADDING_FIELD}":"`
      : `${text.slice(0, -1)},"${PADDING_FIELD}":"`;
  const prefix = Buffer.from(head, "utf8");
  const suffix = Buffer.from(isObject ? `"}` : "", "utf8");
  const padding = Math.max(0, sizeBytes - prefix.length - suffix.length);
  headers["Content-Length"] = prefix.length + padding + suffix.length;
  res.writeHead(status, headers);
  const fill = isObject ? PADDING_CHUNK : Buffer.alloc(PADDING_CHUNK.length, " ");
  const pump = async (): Promise<void> => {
    if (!(await write(res, prefix))) return;
    for (let left = padding; left > 0; left -= fill.length) {
      if (!(await write(res, left >= fill.length ? fill : fill.subarray(0, left)))) return;
    }
    if (!res.destroyed) res.end(suffix);
  };
  pump().catch(() => {
    res.destroy();
  });
}

/** Writes a chunk, waiting for the client to take it in; false once the connection is gone. */
async function write(res: ServerResponse, chunk: Buffer): Promise<boolean> {
  if (res.destroyed) return false;
  if (res.write(chunk)) return true;
  return new Promise<boolean>((resolve) => {
    const done = (drained: boolean) => (): void => {
      res.off("drain", onDrain);
      res.off("close", onClose);
      resolve(drained);
    };
    const onDrain = done(true);
    const onClose = done(false);
    res.once("drain", onDrain);
    res.once("close", onClose);
  });
}
