/**
 * A URL as logs, `check-config` and the status page show it: scheme, host and path only. User
 * names, passwords, query parameters (`?token=…`) and fragments can hold secrets, so none of
 * them is shown.
 */
export function displayUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return "(not a valid URL)";
  }
}
