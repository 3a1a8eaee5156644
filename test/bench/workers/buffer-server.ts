/**
 * The scrape baseline: a bare node:http server in its own process that answers every request
 * with one fixed buffer (the exporter's `/metrics` body, byte for byte, with its content type).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "../lib/rpc.js";

let server: Server | undefined;

const handlers = {
  async listen(args: { body: Uint8Array; contentType: string }): Promise<{ url: string }> {
    const body = Buffer.from(args.body);
    server?.close();
    const s = createServer((_req, res) => {
      res.writeHead(200, { "content-type": args.contentType, "content-length": body.length });
      res.end(body);
    });
    s.keepAliveTimeout = 65_000;
    server = s;
    await new Promise<void>((resolve) => s.listen(0, "127.0.0.1", resolve));
    return { url: `http://127.0.0.1:${(s.address() as AddressInfo).port}` };
  },
};

export type BufferServer = typeof handlers;

serve(handlers);
