/**
 * `wait --exporter URL`: tells a running exporter that a project's operations are moving, so
 * that it polls the project next (`POST /-/nudge`) instead of at its planned time. A nudge that
 * fails is worth a warning, never a failed wait. Credentials in the URL are sent as basic auth
 * and never shown.
 */
import { displayUrl } from "../config/index.js";

/** How long a nudge may take. */
const NUDGE_TIMEOUT_MS = 5_000;

/** Nudges the exporter at `exporterUrl` for `projectId`; what went wrong, or undefined. */
export async function nudgeExporter(
  exporterUrl: string,
  projectId: string,
): Promise<string | undefined> {
  const url = new URL(exporterUrl);
  const user = decodeURIComponent(url.username);
  const password = decodeURIComponent(url.password);
  url.username = "";
  url.password = "";
  url.pathname = `${url.pathname.replace(/\/$/, "")}/-/nudge`;
  url.search = new URLSearchParams({ project: projectId }).toString();
  const shown = displayUrl(exporterUrl);
  try {
    const response = await fetch(url, {
      method: "POST",
      headers:
        user === "" && password === ""
          ? {}
          : { authorization: `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}` },
      signal: AbortSignal.timeout(NUDGE_TIMEOUT_MS),
    });
    const text = await response.text();
    if (response.status === 202) return undefined;
    let said = text.trim();
    try {
      const error = (JSON.parse(text) as { error?: unknown }).error;
      if (typeof error === "string") said = error;
    } catch {
      // Not JSON (a proxy's page): its text, cut short, says what it can.
    }
    return `the exporter at ${shown} answered ${response.status}: ${said.slice(0, 200)}`;
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause : undefined;
    const reason = cause?.message ?? (error instanceof Error ? error.message : String(error));
    return `could not nudge the exporter at ${shown}: ${reason}`;
  }
}
