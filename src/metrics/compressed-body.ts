/**
 * The gzip form of a rendering of `/metrics`, built once per rendering for the scrapes that ask
 * for it. zlib's asynchronous API compresses on libuv's thread pool: for a body of 14 MiB the
 * event loop is held for a few milliseconds (handing the input over, gathering the output),
 * not for the whole compression (`docs/performance.md`).
 */
import { constants, gzip, gzipSync } from "node:zlib";

/**
 * The fastest level: the body is compressed after every rendering whether or not a scrape
 * asks for it, and text this repetitive loses only a few per cent more at the default level
 * (1.19 against 1.09 MiB for 16.7 MiB of series lines), for two and a half times the CPU.
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
