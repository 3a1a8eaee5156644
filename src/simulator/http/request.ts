import type { z } from "zod";
import { badRequest } from "../errors.js";
import type { KeyOwner } from "../model/accounts.js";
import type { AnswerFaultKind } from "./faults.js";

/** What a route handler sees of a request. */
export interface RequestContext {
  readonly params: Readonly<Record<string, string>>;
  readonly query: URLSearchParams;
  /** The owner of the key the request was made with. */
  readonly caller: KeyOwner;
  /** Parses the body as JSON and validates it, or throws a 400 saying what is wrong. */
  json<T>(schema: z.ZodType<T>): T;
  /** A fault that changes what the answer says (API routes only; see faults.ts). */
  readonly answerFault?: AnswerFaultKind | undefined;
}

/** What a handler answers; the server serialises it. A 204 has no body. */
export interface Reply {
  readonly status: number;
  readonly body?: unknown;
  readonly headers?: Readonly<Record<string, string>>;
}

/** A handler answers at once, or (a call that waits on something outside, e.g. computes) later. */
export type Handler = (request: RequestContext) => Reply | Promise<Reply>;

export function requestContext(
  params: Readonly<Record<string, string>>,
  query: URLSearchParams,
  rawBody: string,
  caller: KeyOwner,
  answerFault?: AnswerFaultKind,
): RequestContext {
  return {
    params,
    query,
    caller,
    answerFault,
    json: (schema) => {
      let value: unknown;
      try {
        value = rawBody.trim() === "" ? undefined : JSON.parse(rawBody);
      } catch {
        throw badRequest("request body is not valid JSON");
      }
      const parsed = schema.safeParse(value);
      if (!parsed.success) throw badRequest(describeIssues(parsed.error.issues));
      return parsed.data;
    },
  };
}

function describeIssues(
  issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[],
): string {
  return issues
    .map((issue) => {
      const where = issue.path.map(String).join(".");
      return `${where === "" ? "body" : where}: ${issue.message}`;
    })
    .join("; ");
}

/** The param a route pattern guarantees; a missing one is a routing bug. */
export function param(request: RequestContext, name: string): string {
  const value = request.params[name];
  if (value === undefined) throw new Error(`route has no :${name} parameter`);
  return value;
}

/** An integer query parameter within bounds, its default when absent, else a 400. */
export function integerQuery(
  request: RequestContext,
  name: string,
  bounds: { readonly min: number; readonly max: number; readonly default: number },
): number {
  const raw = request.query.get(name);
  if (raw === null) return bounds.default;
  const value = /^\d+$/.test(raw) ? Number(raw) : Number.NaN;
  if (!(value >= bounds.min && value <= bounds.max)) {
    throw badRequest(`${name} must be an integer from ${bounds.min} to ${bounds.max}`);
  }
  return value;
}
