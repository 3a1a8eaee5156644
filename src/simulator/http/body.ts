import type { IncomingMessage } from "node:http";
import { ApiError } from "../errors.js";

/** Bodies are small JSON documents; anything bigger is refused rather than buffered. */
const MAX_BODY_BYTES = 1024 * 1024;

export async function readBody(req: IncomingMessage, maxBytes = MAX_BODY_BYTES): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      throw new ApiError(413, "payload_too_large", `body exceeds ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
