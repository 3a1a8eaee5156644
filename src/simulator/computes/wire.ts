import type { Socket } from "node:net";

/**
 * The little of PostgreSQL's wire protocol the compute host reads: the startup phase (before
 * authentication), so that it knows when a client really connects, can answer an SSL or GSS
 * request with "no" (the simulated computes speak plain TCP), pass a cancel request on, and
 * add the endpoint's `search_path` to the session's `options`. Everything after the startup
 * message is forwarded untouched.
 */

const SSL_REQUEST = 80877103;
const GSSENC_REQUEST = 80877104;
const CANCEL_REQUEST = 80877102;
/** The server's own bound on a startup packet. */
const MAX_STARTUP_BYTES = 10_000;

export type FirstMessage =
  | {
      readonly kind: "startup";
      readonly protocol: number;
      readonly parameters: ReadonlyMap<string, string>;
      /** Bytes the client sent after the startup message (forwarded after it). */
      readonly rest: Buffer;
    }
  | { readonly kind: "cancel"; readonly packet: Buffer };

export class StartupError extends Error {}

/**
 * Reads the client's first real message, answering SSL and GSS encryption requests with `N`
 * on the way. Rejects when the client closes, sends something else, or stays silent for
 * `timeoutMs`. The socket is paused when it resolves.
 */
export function readFirstMessage(socket: Socket, timeoutMs: number): Promise<FirstMessage> {
  return new Promise((resolve, reject) => {
    let buffered = Buffer.alloc(0);
    const finish = (outcome: () => void): void => {
      clearTimeout(timer);
      socket.off("data", onData);
      socket.off("close", onClose);
      socket.pause();
      outcome();
    };
    const fail = (message: string): void => {
      finish(() => {
        reject(new StartupError(message));
      });
    };
    const onClose = (): void => {
      fail("the client closed the connection before its startup message");
    };
    const onData = (chunk: Buffer): void => {
      buffered = Buffer.concat([buffered, chunk]);
      for (;;) {
        if (buffered.length < 8) return;
        const length = buffered.readInt32BE(0);
        if (length < 8 || length > MAX_STARTUP_BYTES) {
          fail(`invalid startup packet length ${length}`);
          return;
        }
        if (buffered.length < length) return;
        const packet = buffered.subarray(0, length);
        const rest = buffered.subarray(length);
        const code = packet.readInt32BE(4);
        if (code === SSL_REQUEST || code === GSSENC_REQUEST) {
          socket.write("N");
          buffered = Buffer.from(rest);
          continue;
        }
        if (code === CANCEL_REQUEST) {
          finish(() => {
            resolve({ kind: "cancel", packet: Buffer.from(packet) });
          });
          return;
        }
        if (code >> 16 !== 3) {
          fail(`unsupported frontend protocol ${code >> 16}.${code & 0xffff}`);
          return;
        }
        let parameters: Map<string, string>;
        try {
          parameters = parseParameters(packet.subarray(8));
        } catch (error) {
          fail(error instanceof Error ? error.message : String(error));
          return;
        }
        finish(() => {
          resolve({ kind: "startup", protocol: code, parameters, rest: Buffer.from(rest) });
        });
        return;
      }
    };
    const timer = setTimeout(() => {
      fail("no startup message in time");
    }, timeoutMs);
    socket.on("data", onData);
    socket.on("close", onClose);
    socket.resume();
  });
}

function parseParameters(body: Buffer): Map<string, string> {
  const parameters = new Map<string, string>();
  let at = 0;
  const cString = (): string => {
    const end = body.indexOf(0, at);
    if (end < 0) throw new StartupError("malformed startup message");
    const text = body.toString("utf8", at, end);
    at = end + 1;
    return text;
  };
  for (;;) {
    const name = cString();
    if (name === "") return parameters;
    parameters.set(name, cString());
  }
}

/** A startup message with these parameters. */
export function encodeStartup(protocol: number, parameters: ReadonlyMap<string, string>): Buffer {
  const parts: Buffer[] = [];
  for (const [name, value] of parameters) {
    parts.push(Buffer.from(`${name}\0${value}\0`, "utf8"));
  }
  const body = Buffer.concat([...parts, Buffer.from([0])]);
  const header = Buffer.alloc(8);
  header.writeInt32BE(8 + body.length, 0);
  header.writeInt32BE(protocol, 4);
  return Buffer.concat([header, body]);
}

/** The parameters with `-c name=value` settings appended to `options` (values without spaces). */
export function withSettings(
  parameters: ReadonlyMap<string, string>,
  settings: Readonly<Record<string, string>>,
): Map<string, string> {
  const added = Object.entries(settings).map(([name, value]) => {
    if (/\s/.test(value)) throw new RangeError(`setting ${name} must not contain whitespace`);
    return `-c ${name}=${value}`;
  });
  const next = new Map(parameters);
  const options = [parameters.get("options") ?? "", ...added].filter((o) => o !== "");
  next.set("options", options.join(" "));
  return next;
}

/** An ErrorResponse, as the server sends one before closing a session it refuses. */
export function errorResponse(sqlState: string, message: string, severity = "FATAL"): Buffer {
  const fields = Buffer.from(`S${severity}\0V${severity}\0C${sqlState}\0M${message}\0\0`, "utf8");
  const header = Buffer.alloc(5);
  header.write("E", 0, "latin1");
  header.writeInt32BE(4 + fields.length, 1);
  return Buffer.concat([header, fields]);
}
