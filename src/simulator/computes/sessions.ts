/**
 * The clients' sessions of the compute host, each a proxied connection: the host reads its
 * startup message, wakes an idle compute and holds the session until the compute runs (a
 * disabled or deleted endpoint refuses), then forwards it to the server with the endpoint's
 * schema first in its `search_path`. A stop ends the compute's backends, then closes what is
 * left of its sessions.
 */
import net, { type Socket } from "node:net";
import { errorMessage } from "../errors.js";
import type { Catalog } from "./catalog.js";
import {
  checkWaiters,
  running,
  type ComputeHostDeps,
  type HostedCompute,
  type Session,
} from "./host-state.js";
import { encodeStartup, errorResponse, readFirstMessage, withSettings } from "./wire.js";

/** A client that sends no startup message within this is dropped. */
const STARTUP_TIMEOUT_MS = 10_000;
/** A session waiting for its compute to start gives up after this (wall clock). */
const WAKE_TIMEOUT_MS = 300_000;
/** After a stop has ended its backends, sessions still open are closed after this. */
const STOP_GRACE_MS = 1000;

/** The server's TCP address, where sessions go. */
export interface Upstream {
  readonly host: string;
  readonly port: number;
}

/** Where clients' sessions go: the server of `postgresUrl`, over TCP. */
export function upstreamOf(postgresUrl: string): Upstream {
  let url: URL;
  try {
    url = new URL(postgresUrl);
  } catch {
    throw new RangeError("computes.postgresUrl is not a URL");
  }
  if (url.protocol !== "postgres:" && url.protocol !== "postgresql:") {
    throw new RangeError("computes.postgresUrl must be a postgres:// URL");
  }
  const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
  if (host === "" || url.searchParams.has("host")) {
    throw new RangeError(
      "computes.postgresUrl must name the server's TCP host and port (sessions are told apart by their client port)",
    );
  }
  return { host, port: url.port === "" ? 5432 : Number(url.port) };
}

class SessionClosed extends Error {}

/** A refusal the client is told about (an ErrorResponse) before its connection is closed. */
class Refusal extends Error {
  constructor(
    readonly sqlState: string,
    message: string,
  ) {
    super(message);
  }
}

/** What the sessions need of the host. */
export interface SessionsDeps {
  readonly simulator: ComputeHostDeps;
  readonly catalog: Catalog;
  readonly upstream: Upstream;
  /** The host is closing: no session goes through any more. */
  closing(): boolean;
  /** Creates the compute's schema on the server, once. */
  prepare(compute: HostedCompute): Promise<void>;
  /** Writes the computes' rows as they are now. */
  writeRows(computes: readonly HostedCompute[]): Promise<void>;
}

/** Every session of the host, and the server's ports of those forwarded. */
export class Sessions {
  /** Live sessions by their upstream local port. */
  private readonly ports = new Map<number, Session>();
  /** Ended sessions whose ports' rows are still in `client_ports`. */
  private endedPorts: { port: number; session: number }[] = [];
  private nextSession = 1;

  constructor(private readonly deps: SessionsDeps) {}

  /** Live forwarded sessions by their upstream local port (the server's `client_port`). */
  get byPort(): ReadonlyMap<number, Session> {
    return this.ports;
  }

  /** The ports of the sessions ended since the last call, whose rows are to be forgotten. */
  takeEndedPorts(): { port: number; session: number }[] {
    const ended = this.endedPorts;
    this.endedPorts = [];
    return ended;
  }

  /** Takes a client's connection to the compute as a session. */
  accept(compute: HostedCompute, client: Socket): void {
    if (this.deps.closing() || compute.endpoint.deleted) {
      client.destroy();
      return;
    }
    client.setNoDelay(true);
    const session: Session = {
      number: this.nextSession++,
      compute,
      client,
      upstream: undefined,
      port: undefined,
      closed: false,
    };
    compute.sessions.add(session);
    client.on("error", () => undefined);
    client.on("close", () => {
      this.end(session);
    });
    this.serve(session).catch((error: unknown) => {
      if (error instanceof Refusal && !session.closed) {
        client.end(errorResponse(error.sqlState, error.message));
        return;
      }
      if (!(error instanceof SessionClosed) && !session.closed) {
        client.end(errorResponse("XX000", `the simulated compute failed: ${errorMessage(error)}`));
        return;
      }
      this.end(session);
    });
  }

  /** Closes the session's connections; its port's row is forgotten at the next look. */
  end(session: Session): void {
    if (session.closed) return;
    session.closed = true;
    session.client.destroy();
    session.upstream?.destroy();
    session.compute.sessions.delete(session);
    if (session.port !== undefined && this.ports.get(session.port) === session) {
      this.ports.delete(session.port);
      this.endedPorts.push({ port: session.port, session: session.number });
    }
    checkWaiters(session.compute);
  }

  /**
   * A stop ends the compute's backends (clients read "terminating connection due to
   * administrator command"), then closes what is left of its sessions.
   */
  async stop(compute: HostedCompute, graceMs = STOP_GRACE_MS): Promise<void> {
    const sessions = [...compute.sessions].filter((s) => s.upstream !== undefined);
    if (sessions.length === 0) return;
    const ports = sessions.flatMap((s) => (s.port === undefined ? [] : [s.port]));
    try {
      await this.deps.catalog.terminate(ports);
      if (graceMs > 0) await new Promise((resolve) => setTimeout(resolve, graceMs).unref());
    } finally {
      for (const session of sessions) this.end(session);
    }
  }

  private async serve(session: Session): Promise<void> {
    const first = await readFirstMessage(session.client, STARTUP_TIMEOUT_MS).catch(() => {
      throw new SessionClosed();
    });
    if (first.kind === "cancel") {
      // A cancel request names its backend itself: the server finds it.
      await this.forwardCancel(first.packet);
      this.end(session);
      return;
    }
    const compute = session.compute;
    const endpoint = compute.endpoint;
    const { catalog, simulator } = this.deps;
    simulator.settle();
    if (endpoint.deleted) throw new Refusal("XX000", `endpoint ${endpoint.id} not found`);
    if (endpoint.settings.disabled) {
      throw new Refusal(
        "XX000",
        "The endpoint has been disabled. Enable it using the API and retry.",
      );
    }
    // A connection is an access (seed 3.2): activity, and an idle compute starts.
    simulator.plane.lifecycle.connect(endpoint);
    await this.untilRunning(session);
    await this.deps.prepare(compute);
    const upstream = await this.connectUpstream(session);
    const port = upstream.localPort;
    if (port === undefined) throw new Error("the upstream socket has no local port");
    session.port = port;
    this.ports.set(port, session);
    await catalog.registerPort(port, endpoint.id, session.number);
    await this.deps.writeRows([compute]);
    if (session.closed) throw new SessionClosed();
    if (!running(endpoint)) throw new Refusal("57P01", "the compute stopped");
    const parameters = withSettings(first.parameters, {
      search_path: `"$user",public,${catalog.endpointSchema(compute.number)},pg_catalog`,
    });
    upstream.write(encodeStartup(first.protocol, parameters));
    if (first.rest.length > 0) upstream.write(first.rest);
    session.client.pipe(upstream);
    upstream.pipe(session.client);
  }

  /** Resolves once the compute runs with no stop queued; rejects when that cannot come. */
  private untilRunning(session: Session): Promise<void> {
    const { compute } = session;
    const endpoint = compute.endpoint;
    if (running(endpoint)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const done = (outcome: () => void): void => {
        clearTimeout(timer);
        compute.waiters.delete(check);
        outcome();
      };
      const fail = (error: Error): void => {
        done(() => {
          reject(error);
        });
      };
      const check = (): void => {
        if (session.closed || this.deps.closing()) fail(new SessionClosed());
        else if (endpoint.deleted) fail(new Refusal("XX000", `endpoint ${endpoint.id} not found`));
        else if (endpoint.settings.disabled) {
          fail(new Refusal("XX000", "The endpoint has been disabled."));
        } else if (running(endpoint)) done(resolve);
      };
      const timer = setTimeout(() => {
        fail(new Refusal("08006", "the compute did not start in time"));
      }, WAKE_TIMEOUT_MS);
      compute.waiters.add(check);
    });
  }

  private connectUpstream(session: Session): Promise<Socket> {
    const { host, port } = this.deps.upstream;
    return new Promise((resolve, reject) => {
      const socket = net.connect({ host, port });
      session.upstream = socket;
      socket.setNoDelay(true);
      const onError = (error: Error): void => {
        reject(new Refusal("08006", `the compute's server does not answer: ${error.message}`));
      };
      socket.once("error", onError);
      socket.once("connect", () => {
        socket.off("error", onError);
        socket.on("error", () => undefined);
        socket.on("close", () => {
          this.end(session);
        });
        resolve(socket);
      });
      if (session.closed) socket.destroy();
    });
  }

  private forwardCancel(packet: Buffer): Promise<void> {
    const { host, port } = this.deps.upstream;
    return new Promise((resolve) => {
      const socket = net.connect({ host, port }, () => {
        socket.end(packet);
      });
      socket.on("error", () => undefined);
      socket.on("close", () => {
        resolve();
      });
    });
  }
}
