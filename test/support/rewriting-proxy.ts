/**
 * A misbehaving API for the tests the simulator's faults do not cover: an HTTP proxy on loopback
 * in front of the simulator that passes every request on and may rewrite a JSON answer (as a
 * broken proxy or a server bug would) before the client sees it.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** Returns the answer's new body for a request path, or undefined to pass it on unchanged. */
export type Rewrite = (path: string, body: unknown) => unknown;

export interface RewritingProxy {
  /** The proxy's base URL with the same path as the target's (`…/api/v2`). */
  readonly apiUrl: string;
  close(): Promise<void>;
}

export async function startRewritingProxy(
  targetApiUrl: string,
  rewrite: Rewrite,
): Promise<RewritingProxy> {
  const target = new URL(targetApiUrl);
  const server: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? "/", target.origin);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string" && name !== "host" && name !== "connection") {
          headers[name] = value;
        }
      }
      const answer = await fetch(url, { method: req.method ?? "GET", headers });
      const text = await answer.text();
      let body = text;
      if (answer.headers.get("content-type")?.includes("json") === true && text !== "") {
        const changed = rewrite(url.pathname, JSON.parse(text) as unknown);
        if (changed !== undefined) body = JSON.stringify(changed);
      }
      res.writeHead(answer.status, { "content-type": answer.headers.get("content-type") ?? "" });
      res.end(body);
    })().catch(() => {
      res.destroy();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    apiUrl: `http://127.0.0.1:${port}${target.pathname}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => {
          resolve();
        });
      }),
  };
}
