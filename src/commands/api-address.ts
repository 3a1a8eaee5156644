/**
 * Telling a wrong base URL from a wrong id. An API that answers 404 for a project may not know
 * the project, or may not be the API at all: a base URL without `/api/v2` answers 404 for
 * everything. One listing of projects (the API's root collection) tells them apart.
 */
import { ApiError, type ApiClient } from "../api/index.js";
import { DEFAULT_API_URL } from "../config/index.js";

/** Whether `error` is the API's answer 404. */
export function isNotFound(error: unknown): boolean {
  return error instanceof ApiError && error.status === 404;
}

/** Whether the API answers 404 at its root collection (`/projects`) too: its base URL is wrong. */
export async function rootAnswersNotFound(client: ApiClient): Promise<boolean> {
  try {
    await client.listProjects({ limit: 1 });
    return false;
  } catch (error) {
    return isNotFound(error);
  }
}

/** What to say of a base URL that answers 404 at the API's root. */
export function wrongBaseUrl(apiUrl: string, setting = "PGCP_API_URL"): string {
  return (
    `the API base URL ${apiUrl} looks wrong: it answers 404 at /projects too ` +
    `(the API's base URL ends in /api/v2, as ${DEFAULT_API_URL}; check ${setting})`
  );
}
