/**
 * The status page's filter by account and organisation: a GET form (no script), what the filter
 * keeps or why nothing, and the links to the page with a filter.
 */
import type { AccountStatus } from "../accounts/account-status.js";
import { escapeHtml, named, plural } from "../shared/html.js";
import type { FilterStatus, OrganisationChoice } from "./filter.js";
import type { StatusCounts } from "./project-tally.js";

/** What the filter reads of the page's view (`StatusView`). */
export interface FilterPart {
  readonly counts: StatusCounts;
  readonly filter: FilterStatus | undefined;
  readonly accounts: readonly AccountStatus[];
  readonly organisations: readonly OrganisationChoice[];
}

/** A link to the page with this filter (relative: the page's own path, behind any proxy). */
export function filterHref(filter: {
  account?: string | undefined;
  org?: string | undefined;
}): string {
  const query = new URLSearchParams();
  if (filter.account !== undefined) query.set("account", filter.account);
  if (filter.org !== undefined) query.set("org", filter.org);
  return escapeHtml(`?${query.toString()}`);
}

/**
 * The filter by account and organisation: a GET form (no script), shown when there is a choice
 * (several accounts, some organisation) or a filter; what the filter keeps, or why nothing.
 */
export function renderFilter(view: FilterPart): string {
  const f = view.filter;
  const accountChoice = view.accounts.length > 1 || f?.account !== undefined;
  const orgChoice = view.organisations.length > 0 || f?.orgId !== undefined;
  if (!accountChoice && !orgChoice) return "";
  const option = (value: string, label: string, selected: boolean) =>
    `<option value="${escapeHtml(value)}"${selected ? " selected" : ""}>${escapeHtml(label)}</option>`;
  const accountOptions = view.accounts.map((a) => option(a.name, a.name, a.name === f?.account));
  if (f?.unknownAccount === true && f.account !== undefined) {
    accountOptions.push(option(f.account, `${f.account} (unknown)`, true));
  }
  const orgOptions = view.organisations.map((o) =>
    option(o.id, o.name === undefined ? o.id : `${o.name} (${o.id})`, o.id === f?.orgId),
  );
  if (f?.unknownOrg === true && f.orgId !== undefined) {
    orgOptions.push(option(f.orgId, `${f.orgId} (unknown)`, true));
  }
  const selects = [
    accountChoice
      ? `<label>Account <select name="account">${option("", "every account", f?.account === undefined)}${accountOptions.join("")}</select></label>`
      : "",
    orgChoice
      ? `<label>Organisation <select name="org">${option("", "every organisation", f?.orgId === undefined)}${orgOptions.join("")}</select></label>`
      : "",
  ].join("");
  const form = `<form id="filter" method="get">${selects}<button type="submit">Show</button>${f === undefined ? "" : `<a href="?">show every project</a>`}</form>\n`;
  return form + (f === undefined ? "" : renderFilterNote(view, f));
}

function renderFilterNote(view: FilterPart, f: FilterStatus): string {
  const what: string[] = [];
  if (f.account !== undefined) what.push(`the account <b>${escapeHtml(f.account)}</b>`);
  if (f.orgId !== undefined) {
    what.push(`the organisation ${named(f.orgName, f.orgId, "org-name")}`);
  }
  const notes: string[] = [];
  if (f.unknownAccount && f.account !== undefined) {
    const names = view.accounts.map((a) => a.name);
    notes.push(
      `<p class="note" id="filter-unknown-account">No account is named <b>${escapeHtml(f.account)}</b>${names.length === 0 ? "" : ` (the accounts: ${escapeHtml(names.join(", "))})`}: no project is shown.</p>`,
    );
  }
  if (f.unknownOrg && f.orgId !== undefined) {
    notes.push(
      `<p class="note" id="filter-unknown-org">No watched project is known to belong to the organisation <code>${escapeHtml(f.orgId)}</code>: no project is shown. A project's organisation is known once the exporter has read the project, shortly after it is first watched.</p>`,
    );
  }
  const shown = `<p class="note" id="filter-note">Showing the ${escapeHtml(view.counts.projects)} of ${escapeHtml(plural(f.watched, "watched project"))} of ${what.join(" and ")}: the counts, outbox, dead letters and silenced alerts below are theirs alone.</p>`;
  return `${shown}\n${notes.map((n) => `${n}\n`).join("")}`;
}
