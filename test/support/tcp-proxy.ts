/**
 * A TCP proxy on 127.0.0.1 (a random port) in front of one loopback port, that can cut a client
 * off: `cut` resets every connection through it and refuses new ones (each is reset as soon as
 * it is accepted) until `heal`. The replica soak puts one between each replica and the database
 * (or PgBouncer) to cut a replica off from it while the others go on.
 *
 *   const proxy = await startTcpProxy(5432);
 *   ... connect to 127.0.0.1:proxy.port ...
 *   proxy.cut(); ... proxy.heal();
 *   await proxy.close();
 */
import { createServer, connect, type Socket } from "node:net";
import type { AddressInfo } from "node:net";

export interface TcpProxy {
  readonly port: number;
  /** Connections open through it now. */
  connections(): number;
  /** Resets every connection and refuses new ones until `heal`. */
  cut(): void;
  heal(): void;
  isCut(): boolean;
  /** Resets every connection and closes the listener. */
  close(): Promise<void>;
}

export async function startTcpProxy(targetPort: number): Promise<TcpProxy> {
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let cut = false;
  const server = createServer((client) => {
    if (cut) {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect({ host: "127.0.0.1", port: targetPort });
    const pair = { client, upstream };
    pairs.add(pair);
    const end = () => {
      pairs.delete(pair);
      client.destroy();
      upstream.destroy();
    };
    client.on("error", end).on("close", end);
    upstream.on("error", end).on("close", end);
    client.pipe(upstream);
    upstream.pipe(client);
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const resetAll = () => {
    for (const { client, upstream } of [...pairs]) {
      client.resetAndDestroy();
      upstream.destroy();
    }
    pairs.clear();
  };
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => pairs.size,
    cut: () => {
      cut = true;
      resetAll();
    },
    heal: () => {
      cut = false;
    },
    isCut: () => cut,
    close: async () => {
      cut = true;
      const closed = new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
      });
      resetAll();
      await closed;
    },
  };
}
