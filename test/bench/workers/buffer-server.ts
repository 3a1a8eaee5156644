/**
 * The scrape baseline: a bare node:http server in its own process that answers every request
 * with one fixed buffer (the exporter's `/metrics` body, byte for byte, with its content type),
 * or with another (the exporter's gzip body) to a request whose Accept-Encoding names gzip.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { serve } from "../lib/rpc.js";

let server: Server | undefined;

const handlers = {
  async listen(args: {
    body: Uint8Array;
    gzip: Uint8Array;
    contentType: string;
  }): Promise<{ url: string }> {
    const plain = Buffer.from(args.body);
    const gzip = Buffer.from(args.gzip);
    server?.close();
    const s = createServer((req, res) => {
      const zipped = (req.headers["accept-encoding"] ?? "").includes("gzip");
      const body = zipped ? gzip : plain;
      res.writeHead(200, {
        "content-type": args.contentType,
        "content-length": body.length,
        vary: "Accept-Encoding",
        ...(zipped ? { "content-encoding": "gzip" } : {}),
      });
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
