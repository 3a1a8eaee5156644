import type { ServerResponse } from "node:http";
import type { Reply } from "./request.js";

/**
 * How the answer travels: intact, as malformed JSON (a strict prefix of the real body, which
 * no JSON parser accepts, with a matching Content-Length), or truncated (the full body's
 * Content-Length, half the body, then the connection is closed).
 */
export type Delivery = "intact" | "malformed" | "truncated";

export function sendReply(res: ServerResponse, reply: Reply, delivery: Delivery = "intact"): void {
  const headers: Record<string, string | number> = { ...reply.headers };
  if (reply.body === undefined) {
    res.writeHead(reply.status, headers);
    res.end();
    return;
  }
  const body = Buffer.from(JSON.stringify(reply.body), "utf8");
  headers["Content-Type"] = "application/json";
  const half = body.subarray(0, Math.max(1, Math.floor(body.length / 2)));
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
