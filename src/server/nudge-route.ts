/**
 * `POST /-/nudge`: a caller that has just caused operations (a CI job that created a branch)
 * asks the exporter to poll those projects next. The projects come as `?project=<id>` (one or
 * more) or as a JSON body `{"projects": ["<id>", …]}`. This module reads and checks the request
 * and writes the answer; what a nudge does is the daemon's (`nudge` below).
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { RESOURCE_ID_PATTERN } from "../contract/index.js";
import type { NudgeResult } from "../scheduler/index.js";

/** Most projects one nudge may name. */
const MAX_PROJECTS = 100;
/** The largest body read (a hundred ids and some JSON). */
const MAX_BODY_BYTES = 16 * 1024;

/** A request that cannot be a nudge: its status and why. */
class NudgeRequestError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * The handler. `watched` says which projects the exporter watches; `nudge` is called only when
 * every named project is one of them (a nudge for one it does not watch is refused whole: 404).
 */
export function nudgeRoute(
  watched: (projectId: string) => boolean,
  nudge: (projectIds: readonly string[]) => ReadonlyMap<string, NudgeResult>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    void projectsOf(req).then(
      (ids) => {
        const unknown = ids.filter((id) => !watched(id));
        if (unknown.length > 0) {
          answer(res, 404, {
            error: `not watched by this exporter: ${unknown.join(", ")}`,
            unknown,
          });
          return;
        }
        const done = nudge(ids);
        const by = (outcome: NudgeResult) => ids.filter((id) => done.get(id) === outcome);
        answer(res, 202, { nudged: by("nudged"), coalesced: by("coalesced") });
      },
      (error: unknown) => {
        const status = error instanceof NudgeRequestError ? error.status : 400;
        answer(res, status, { error: error instanceof Error ? error.message : String(error) });
      },
    );
  };
}

async function projectsOf(req: IncomingMessage): Promise<string[]> {
  const query = new URL(req.url ?? "/", "http://exporter").searchParams.getAll("project");
  const body = await readBody(req);
  let ids = query;
  if (body.trim() !== "") {
    let parsed: unknown;
    try {
      parsed = JSON.parse(body);
    } catch {
      throw new NudgeRequestError(400, 'the body is not JSON: send {"projects": ["<id>", …]}');
    }
    const projects = (parsed as { projects?: unknown } | null)?.projects;
    if (!Array.isArray(projects) || !projects.every((p) => typeof p === "string")) {
      throw new NudgeRequestError(400, 'the body must be {"projects": ["<id>", …]}');
    }
    ids = [...query, ...projects];
  }
  const unique = [...new Set(ids)];
  if (unique.length === 0) {
    throw new NudgeRequestError(400, 'name the projects: ?project=<id> or {"projects": […]}');
  }
  if (unique.length > MAX_PROJECTS) {
    throw new NudgeRequestError(400, `at most ${MAX_PROJECTS} projects a nudge`);
  }
  const bad = unique.find((id) => !RESOURCE_ID_PATTERN.test(id));
  if (bad !== undefined) {
    throw new NudgeRequestError(
      400,
      `not a project id: ${JSON.stringify(bad.slice(0, 64))} (lowercase letters, digits and -)`,
    );
  }
  return unique;
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        // The rest is read and dropped, so that the answer can still be sent.
        req.removeAllListeners("data");
        req.resume();
        reject(new NudgeRequestError(413, `the body is over ${MAX_BODY_BYTES} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      resolve(Buffer.concat(chunks).toString("utf8"));
    });
    req.on("error", reject);
  });
}

function answer(res: ServerResponse, status: number, body: unknown): void {
  if (res.headersSent) return;
  res.writeHead(status, { "content-type": "application/json" }).end(`${JSON.stringify(body)}\n`);
}
