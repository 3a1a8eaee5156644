/**
 * The compute host's listeners: each endpoint's on a loopback address of its own, all on one
 * port. An endpoint whose address:port someone else holds moves to the next free address.
 */
import net, { type Server, type Socket } from "node:net";
import type { HostedCompute } from "./host-state.js";

/** Addresses tried for one endpoint when its address:port is taken by someone else. */
const ADDRESS_ATTEMPTS = 16;

/** What an endpoint's listener needs of the host. */
export interface ListenerDeps {
  /** The port every endpoint listens on. */
  readonly port: number;
  /** A loopback address no endpoint has had yet. */
  nextAddress(): string;
  /** Takes a client's connection to the compute. */
  accept(compute: HostedCompute, client: Socket): void;
  /** The host is closing: a listener that opens now closes again. */
  closing(): boolean;
}

/** Opens the compute's listener, unless its endpoint is deleted or the host closes meanwhile. */
export async function openListener(compute: HostedCompute, deps: ListenerDeps): Promise<void> {
  for (let attempt = 0; attempt < ADDRESS_ATTEMPTS; attempt++) {
    const server = net.createServer((socket) => {
      deps.accept(compute, socket);
    });
    try {
      await listen(server, compute.address, deps.port);
    } catch (error) {
      server.close();
      if (!(isCode(error, "EADDRINUSE") || isCode(error, "EADDRNOTAVAIL"))) throw error;
      // Someone else holds address:port: the endpoint moves to the next free address.
      compute.address = deps.nextAddress();
      compute.endpoint.host = compute.address;
      continue;
    }
    if (deps.closing() || compute.endpoint.deleted) {
      server.close();
      return;
    }
    compute.listener = server;
    return;
  }
}

/** Listens on host:port alone (no other process may share it). */
export function listen(server: Server, host: string, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen({ host, port, exclusive: true }, () => {
      server.off("error", reject);
      resolve();
    });
  });
}

function isCode(error: unknown, code: string): boolean {
  return error instanceof Error && "code" in error && error.code === code;
}
