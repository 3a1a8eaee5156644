/**
 * The status page's account sections: the banners of the accounts whose key the API refuses,
 * whose base URL it answers 404 at, or whose project discovery failed; and, with several
 * accounts, each one's projects and request budget.
 */
import { escapeHtml, timeAgo } from "../shared/html.js";
import type { AccountStatus, DiscoveryError } from "./account-status.js";

/** What the account sections read of the page's view (`StatusView`). */
export interface AccountsPart {
  readonly generatedAtMs: number;
  readonly accounts: readonly AccountStatus[];
  readonly discoveryErrors: readonly DiscoveryError[];
}

/** The banners of the accounts the API refuses or answers 404 for, or whose discovery failed. */
export function renderDiscovery(view: AccountsPart): string {
  // The account is named when there are several (the one of the single-key settings is not).
  const named = view.accounts.length > 1;
  const refused = view.accounts
    .map((a) => {
      const r = a.keyRefusal;
      if (r === undefined) return "";
      return `<p class="banner key-refused" data-account="${escapeHtml(a.name)}">The API refuses the key${named ? ` of the account ${escapeHtml(a.name)}` : ""} since ${timeAgo(r.sinceMs, view.generatedAtMs)}: its projects are not watched, and one poll at a time tries the key again, backing off to every 10 minutes: <span class="error">${escapeHtml(r.message)}</span></p>\n`;
    })
    .join("");
  const wrongUrl = view.accounts
    .map((a) => {
      if (a.wrongBaseUrlSinceMs === undefined) return "";
      return `<p class="banner wrong-base-url" data-account="${escapeHtml(a.name)}">The API answers 404 at its root${named ? ` for the account ${escapeHtml(a.name)}` : ""} since ${timeAgo(a.wrongBaseUrlSinceMs, view.generatedAtMs)}: the base URL <code>${escapeHtml(a.url)}</code> is probably wrong (it should end in <code>/api/v2</code>); its projects are polled again with backoff until it answers.</p>\n`;
    })
    .join("");
  return (
    refused +
    wrongUrl +
    view.discoveryErrors
      .map(
        (d) =>
          `<p class="banner discovery-error" data-account="${escapeHtml(d.account)}">Project discovery${named ? ` of the account ${escapeHtml(d.account)}` : ""} failed ${timeAgo(d.atMs, view.generatedAtMs)}; its previous list of projects stays: <span class="error">${escapeHtml(d.message)}</span></p>\n`,
      )
      .join("")
  );
}

/** Each account's projects and request budget; nothing for the one account of `api.key`. */
export function renderAccounts(view: AccountsPart): string {
  if (view.accounts.length < 2) return "";
  const rows = view.accounts
    .map(
      (a) => `<tr data-account="${escapeHtml(a.name)}">
<td class="account-name">${escapeHtml(a.name)}</td>
<td><code>${escapeHtml(a.url)}</code></td>
<td class="num projects">${escapeHtml(a.projects)}</td>
<td class="num stretch">${escapeHtml(a.stretch.toFixed(2))}</td>
<td class="num intervals">${escapeHtml(`${Math.round(a.intervals.fast)} s / ${Math.round(a.intervals.active)} s / ${Math.round(a.intervals.idle)} s`)}</td>
<td class="num tokens">${escapeHtml(Math.floor(a.tokens))}</td>
</tr>`,
    )
    .join("\n");
  return `<section id="accounts">
<h2>Accounts</h2>
<p class="note">Each account has its own rate limit; its projects' intervals stretch to fit it.</p>
<table>
<thead><tr><th>Account</th><th>API</th><th class="num">Projects</th><th class="num">Stretch</th><th class="num">Interval (open / active / idle)</th><th class="num">Limiter tokens</th></tr></thead>
<tbody>
${rows}
</tbody>
</table>
</section>
`;
}
