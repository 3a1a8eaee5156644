/**
 * The exporter's HTTP server: `/metrics` (a cached rendering, so a scrape writes a buffer),
 * `/healthz` (the process is alive) and `/readyz` (state loaded and at least one successful
 * poll), following kube-state-metrics' conventions. It holds no business logic.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface Exposition {
  /** The current rendering of every metric, and its content type. */
  current(): { body: Buffer; contentType: string };
}

export interface ServerOptions {
  /** `host:port` or `:port` (all interfaces). */
  readonly listen: string;
  readonly metrics: Exposition;
  /** Why the exporter is not ready yet, or undefined when it is. */
  readonly notReadyReason: () => string | undefined;
  /**
   * False while `/metrics` must not be served yet (the committed state is being loaded: a
   * scrape then would see counters drop to zero); it answers 503. Default: always served.
   */
  readonly metricsServed?: () => boolean;
  /** Extra routes (the status page), tried after the built-in ones. */
  readonly routes?: Readonly<Record<string, (req: IncomingMessage, res: ServerResponse) => void>>;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  close(): Promise<void>;
}

/** The server could not listen on its address; the message says why and what to do. */
export class ListenError extends Error {
  override readonly name = "ListenError";
  readonly code: string | undefined;

  constructor(listen: string, cause: Error) {
    const code = (cause as { code?: unknown }).code;
    super(
      `cannot listen on ${listen}: ${listenReason(typeof code === "string" ? code : undefined, cause)}`,
    );
    this.code = typeof code === "string" ? code : undefined;
  }
}

function listenReason(code: string | undefined, cause: Error): string {
  switch (code) {
    case "EADDRINUSE":
      return "the address is in use by another process (choose another with --listen or PGCP_LISTEN)";
    case "EACCES":
      return "permission denied (ports below 1024 need privileges: choose a higher port)";
    case "EADDRNOTAVAIL":
      return "this host has no such address (use one of its own, or :port for every interface)";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "the host name does not resolve";
    default:
      return cause.message;
  }
}

export function parseListen(listen: string): { host: string | undefined; port: number } {
  const at = listen.lastIndexOf(":");
  const host = listen.slice(0, at).replace(/^\[(.*)\]$/, "$1");
  return { host: host === "" ? undefined : host, port: Number(listen.slice(at + 1)) };
}

export async function startServer(options: ServerOptions): Promise<RunningServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (req.method !== "GET" && req.method !== "HEAD") {
      res
        .writeHead(405, { allow: "GET, HEAD", "content-type": "text/plain" })
        .end("method not allowed\n");
      return;
    }
    if (path === "/metrics") {
      if (options.metricsServed?.() === false) {
        res
          .writeHead(503, { "content-type": "text/plain", "retry-after": "1" })
          .end("starting: the committed state is being loaded\n");
        return;
      }
      const { body, contentType } = options.metrics.current();
      res.writeHead(200, { "content-type": contentType, "content-length": body.length });
      res.end(req.method === "HEAD" ? undefined : body);
    } else if (path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("OK\n");
    } else if (path === "/readyz") {
      const reason = options.notReadyReason();
      if (reason === undefined) res.writeHead(200, { "content-type": "text/plain" }).end("OK\n");
      else res.writeHead(503, { "content-type": "text/plain" }).end(`not ready: ${reason}\n`);
    } else {
      const route = options.routes?.[path];
      if (route !== undefined) route(req, res);
      else res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    }
  });
  server.keepAliveTimeout = 65_000;
  const { host, port } = parseListen(options.listen);
  await new Promise<void>((resolve, reject) => {
    const fail = (error: Error) => {
      reject(new ListenError(options.listen, error));
    };
    server.once("error", fail);
    server.listen(port, host, () => {
      server.off("error", fail);
      resolve();
    });
  });
  const address = server.address() as AddressInfo;
  const shownHost = address.family === "IPv6" ? `[${address.address}]` : address.address;
  return {
    url: `http://${shownHost === "[::]" || shownHost === "0.0.0.0" ? "127.0.0.1" : shownHost}:${address.port}`,
    port: address.port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
