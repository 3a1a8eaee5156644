/**
 * The exporter's HTTP server: `/metrics` (a cached rendering, so a scrape writes a buffer: the
 * plain one, or its gzip form when the scraper asks for gzip),
 * `/healthz` (the process is alive) and `/readyz` (state loaded and at least one successful
 * poll), following kube-state-metrics' conventions. With a web configuration it serves HTTPS
 * and asks for basic auth (on every path, or on all but the health endpoints). It holds no
 * business logic.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer, type Server as TlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import type { SecureContextOptions } from "node:tls";
import type { TlsSettings, WebSecurity } from "../config/index.js";
import type { Exposition } from "../metrics/index.js";
import { createAccessGuard, type AccessGuard } from "./access.js";
import { chooseContentCoding } from "./content-coding.js";

export interface ServerOptions {
  /** `host:port` or `:port` (all interfaces). */
  readonly listen: string;
  readonly metrics: Exposition;
  /** Why the exporter is not ready yet, or undefined when it is. */
  readonly notReadyReason: () => string | undefined;
  /** While it is ready: what stops part of its work, said in `/readyz`'s 200 answer. */
  readonly readyProblems?: () => string | undefined;
  /**
   * False while `/metrics` must not be served yet (the committed state is being loaded: a
   * scrape then would see counters drop to zero); it answers 503. Default: always served.
   */
  readonly metricsServed?: () => boolean;
  /** Extra routes (the status page), tried after the built-in ones. */
  readonly routes?: Readonly<Record<string, (req: IncomingMessage, res: ServerResponse) => void>>;
  /** Routes that take a POST (`/-/nudge`), behind the same TLS and basic auth as the rest. */
  readonly posts?: Readonly<Record<string, (req: IncomingMessage, res: ServerResponse) => void>>;
  /** TLS, users and headers from the web configuration file; none serves plain HTTP to all. */
  readonly security?: WebSecurity | undefined;
  /** Answer `/healthz` and `/readyz` without authentication (for probes that cannot log in). */
  readonly healthWithoutAuth?: boolean;
}

export interface RunningServer {
  readonly url: string;
  readonly port: number;
  /**
   * Applies a re-read web configuration to the next requests (certificates, users, headers,
   * whether the health endpoints ask for a login). Turning TLS on or off, or changing how
   * client certificates are asked for, needs a restart: that throws, and nothing changes.
   */
  updateAccess(security: WebSecurity | undefined, healthWithoutAuth: boolean): void;
  close(): Promise<void>;
}

const HEALTH_PATHS: ReadonlySet<string> = new Set(["/healthz", "/readyz"]);

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
  let security = options.security;
  let healthWithoutAuth = options.healthWithoutAuth === true;
  let guard: AccessGuard | undefined = security && createAccessGuard(security);

  const answer = (req: IncomingMessage, res: ServerResponse) => {
    for (const [name, value] of Object.entries(security?.headers ?? {})) res.setHeader(name, value);
    const path = (req.url ?? "/").split("?")[0] ?? "/";
    if (guard === undefined || (healthWithoutAuth && HEALTH_PATHS.has(path))) {
      route(req, res, path);
      return;
    }
    void guard.check(req).then((decision) => {
      if (decision.allowed) {
        route(req, res, path);
        return;
      }
      if (decision.status === 401) {
        res.setHeader("www-authenticate", 'Basic realm="pgcp-exporter", charset="UTF-8"');
      }
      res.writeHead(decision.status, { "content-type": "text/plain" }).end(`${decision.reason}\n`);
    });
  };

  const route = (req: IncomingMessage, res: ServerResponse, path: string) => {
    const post = options.posts?.[path];
    if (post !== undefined) {
      if (req.method === "POST") post(req, res);
      else res.writeHead(405, { allow: "POST", "content-type": "text/plain" }).end("use POST\n");
      return;
    }
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
      // Lent until the response is done (sent or aborted): its buffers are then reused.
      const { rendering, release } = options.metrics.lend();
      res.once("close", release);
      const gzip = chooseContentCoding(req.headers["accept-encoding"]) === "gzip";
      const body = gzip ? rendering.gzip : rendering.body;
      res.writeHead(200, {
        "content-type": rendering.contentType,
        "content-length": body.length,
        vary: "Accept-Encoding",
        ...(gzip ? { "content-encoding": "gzip" } : {}),
      });
      res.end(req.method === "HEAD" ? undefined : body);
    } else if (path === "/healthz") {
      res.writeHead(200, { "content-type": "text/plain" }).end("OK\n");
    } else if (path === "/readyz") {
      const reason = options.notReadyReason();
      const problems = reason === undefined ? options.readyProblems?.() : undefined;
      const ok = problems === undefined ? "OK\n" : `OK, but: ${problems}\n`;
      if (reason === undefined) res.writeHead(200, { "content-type": "text/plain" }).end(ok);
      else res.writeHead(503, { "content-type": "text/plain" }).end(`not ready: ${reason}\n`);
    } else {
      const extra = options.routes?.[path];
      if (extra !== undefined) extra(req, res);
      else res.writeHead(404, { "content-type": "text/plain" }).end("not found\n");
    }
  };

  const tls = security?.tls;
  const server: Server | TlsServer =
    tls === undefined
      ? createServer(answer)
      : createTlsServer({ ...secureContext(tls), ...clientCertificates(tls) }, answer);
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
  const scheme = tls === undefined ? "http" : "https";
  return {
    url: `${scheme}://${shownHost === "[::]" || shownHost === "0.0.0.0" ? "127.0.0.1" : shownHost}:${address.port}`,
    port: address.port,
    updateAccess(next, nextHealthWithoutAuth) {
      const before = security?.tls;
      const after = next?.tls;
      if ((before === undefined) !== (after === undefined)) {
        throw new Error("turning TLS on or off needs a restart");
      }
      if (before !== undefined && after !== undefined) {
        if (before.clientAuth !== after.clientAuth) {
          throw new Error("changing tls_server_config.client_auth_type needs a restart");
        }
        (server as TlsServer).setSecureContext(secureContext(after));
      }
      security = next;
      guard = next && createAccessGuard(next);
      healthWithoutAuth = nextHealthWithoutAuth;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}

function secureContext(tls: TlsSettings): SecureContextOptions {
  return {
    cert: tls.cert,
    key: tls.key,
    minVersion: tls.minVersion,
    maxVersion: tls.maxVersion,
    ...(tls.ca === undefined ? {} : { ca: tls.ca }),
  };
}

/** The handshake's part of client_auth_type; the rest is checked per request (access.ts). */
function clientCertificates(tls: TlsSettings): {
  requestCert: boolean;
  rejectUnauthorized: boolean;
} {
  return {
    requestCert: tls.clientAuth !== "NoClientCert",
    rejectUnauthorized: tls.clientAuth === "RequireAndVerifyClientCert",
  };
}
