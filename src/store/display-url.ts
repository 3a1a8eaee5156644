/**
 * A URL as logs, errors, `check-config` and the status page show it: scheme, host and path only.
 * User names, passwords, query parameters (`?token=…`, `?sslpassword=…`) and fragments can hold
 * secrets, so none of them is shown. Here at the bottom of the layers because the Postgres store
 * names its database this way, and the configuration shows its URLs the same way.
 */
export function displayUrl(raw: string, unparsable = "(not a valid URL)"): string {
  try {
    const url = new URL(raw);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return unparsable;
  }
}
