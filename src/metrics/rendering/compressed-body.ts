/**
 * The gzip form of a rendering of `/metrics`, built once per rendering, on libuv's thread pool:
 * the event loop only hands the input over and gathers the output
 * (docs/performance.md#gzip-and-the-openmetrics-format).
 */
import { constants, gzip, gzipSync } from "node:zlib";

/**
 * The fastest level: the body is compressed after every rendering whether or not a scrape
 * asks for it, and text this repetitive compresses only a few per cent better at the default
 * level, for more than twice the CPU.
 */
const LEVEL = constants.Z_BEST_SPEED;

/** The gzip form of `body`, compressed off the event loop. */
export function gzipBody(body: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    gzip(body, { level: LEVEL }, (error, compressed) => {
      if (error === null) resolve(compressed);
      else reject(error);
    });
  });
}

/** The gzip form of `body` at once, for bodies known to be tiny (the empty one). */
export function gzipBodyNow(body: Buffer): Buffer {
  return gzipSync(body, { level: LEVEL });
}
