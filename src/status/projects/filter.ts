/**
 * The filter of the page (`?account=` and `?org=`): which watched projects it keeps (the counts,
 * rows, outbox, dead letters and silenced alerts are then theirs alone), what it found, and the
 * organisations it offers: those some watched project is known to belong to.
 */
import type { ProjectInfo } from "../../sync/index.js";
import type { StatusSource } from "../shared/source.js";
import { nameOrUndefined, type Clean } from "../shared/text.js";

/** Which projects the page shows (`?account=` and `?org=`); none given: every watched one. */
export interface StatusFilter {
  /** The configured account's name. */
  readonly account?: string | undefined;
  /** The organisation's id. */
  readonly orgId?: string | undefined;
}

/** The filter the view was built with, and what it found. */
export interface FilterStatus {
  readonly account: string | undefined;
  readonly orgId: string | undefined;
  /** The organisation's name, when known. */
  readonly orgName: string | undefined;
  /** The filter names an account that is not configured: no project matches. */
  readonly unknownAccount: boolean;
  /** No watched project is known to belong to the organisation: none matches. */
  readonly unknownOrg: boolean;
  /** Every watched project, matching or not (the matches are `counts.projects`). */
  readonly watched: number;
}

/** An organisation some watched project is known to belong to: a choice of the filter. */
export interface OrganisationChoice {
  readonly id: string;
  /** Its name (from outside), once read. */
  readonly name: string | undefined;
  /** Watched projects known to belong to it. */
  readonly projects: number;
}

/** The organisations of the watched projects, as their descriptions say, one project at a time. */
export class Organisations {
  readonly #orgs = new Map<string, { name: string | undefined; projects: number }>();

  add(info: ProjectInfo | undefined): void {
    if (info?.orgId === undefined) return;
    const org = this.#orgs.get(info.orgId);
    if (org === undefined) this.#orgs.set(info.orgId, { name: info.orgName, projects: 1 });
    else {
      org.projects += 1;
      org.name ??= info.orgName;
    }
  }

  /** The filter's choices, by name then id. */
  choices(clean: Clean): OrganisationChoice[] {
    const key = (o: OrganisationChoice) => (o.name ?? o.id).toLowerCase();
    return [...this.#orgs]
      .map(([id, o]) => ({ id, name: nameOrUndefined(o.name, clean), projects: o.projects }))
      .sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : a.id < b.id ? -1 : 1));
  }
}

/**
 * The watched projects the filter keeps, in the daemon's order. A project's account is the one
 * it is polled under (known from the start); its organisation is known once it was described.
 */
export function selectProjects(
  watched: readonly string[],
  wanted: StatusFilter | undefined,
  source: StatusSource,
  accounts: readonly string[],
  accountOf: ReadonlyMap<string, string>,
  organisations: readonly OrganisationChoice[],
): { ids: readonly string[]; filter: FilterStatus | undefined } {
  const account = wanted?.account;
  const orgId = wanted?.orgId;
  if (account === undefined && orgId === undefined) return { ids: watched, filter: undefined };
  const org = orgId === undefined ? undefined : organisations.find((o) => o.id === orgId);
  const ids = watched.filter((id) => {
    const info = source.get(id)?.info;
    if (account !== undefined && (accountOf.get(id) ?? info?.account) !== account) return false;
    return orgId === undefined || info?.orgId === orgId;
  });
  // Without the accounts (a view built before the daemon), the described projects say theirs.
  const knownAccount =
    account === undefined ||
    (accounts.length > 0
      ? accounts.includes(account)
      : watched.some((id) => source.get(id)?.info?.account === account));
  return {
    ids,
    filter: {
      account,
      orgId,
      orgName: org?.name,
      unknownAccount: !knownAccount,
      unknownOrg: orgId !== undefined && org === undefined,
      watched: watched.length,
    },
  };
}
