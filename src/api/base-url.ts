/**
 * Telling a wrong base URL from a wrong id. An API that answers 404 for a project may not know
 * the project, or may not be the API at all: a base URL without `/api/v2` answers 404 for
 * everything. One listing of projects (the API's root collection) tells them apart. The one
 * decision of `check-config`, `wait` and the daemon.
 */
import type { ApiClient } from "./client.js";
import { ApiError } from "./errors.js";
import { DEFAULT_BASE_URL } from "./options.js";

/** Whether `error` is the API's answer 404. */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

/** Whether the API answers 404 at its root collection (`/projects`) too: its base URL is wrong. */
export async function rootAnswersNotFound(
  client: Pick<ApiClient, "listProjects">,
  signal?: AbortSignal,
): Promise<boolean> {
  try {
    await client.listProjects({ limit: 1 }, signal === undefined ? undefined : { signal });
    return false;
  } catch (error) {
    return isNotFound(error);
  }
}

/** What to say of a base URL that answers 404 at the API's root. */
export function wrongBaseUrl(apiUrl: string, setting = "PGCP_API_URL"): string {
  return (
    `the API base URL ${apiUrl} looks wrong: it answers 404 at /projects too ` +
    `(the API's base URL ends in /api/v2, as ${DEFAULT_BASE_URL}; check ${setting})`
  );
}
