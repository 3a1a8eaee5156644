/**
 * A request the simulator refuses, with the HTTP status and the `code` of the error body.
 * The model throws these; the HTTP layer turns them into `{code, message, request_id}`.
 */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly headers: Readonly<Record<string, string>> = {},
  ) {
    super(message);
    this.name = "ApiError";
  }
}

export const badRequest = (message: string): ApiError => new ApiError(400, "bad_request", message);
export const notFound = (message: string): ApiError => new ApiError(404, "not_found", message);
export const conflict = (message: string): ApiError => new ApiError(409, "conflict", message);
export const planLimit = (message: string): ApiError => new ApiError(422, "plan_limit", message);
export const locked = (message: string): ApiError => new ApiError(423, "locked", message);

/** What went wrong, in words: an error's message, or the thrown value as text. */
export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
