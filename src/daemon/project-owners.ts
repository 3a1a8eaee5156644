/**
 * Which account watches each project: the projects each account lists or discovers, merged in
 * the configuration's order. A project id seen under two accounts is watched once, under the
 * first, and the others are named so that the daemon can warn. Pure.
 */

/** The projects one account lists or discovered. */
export interface AccountFinding {
  readonly account: string;
  readonly projectIds: readonly string[];
}

/** A project seen under more than one account. */
export interface SharedProject {
  readonly projectId: string;
  /** The account that watches it (the first in the configuration). */
  readonly watchedBy: string;
  /** The accounts that also see it, in the configuration's order. */
  readonly alsoSeenBy: readonly string[];
}

export interface ProjectOwners {
  /** Each project with the one account that watches it, in the order found. */
  readonly owners: ReadonlyMap<string, string>;
  readonly shared: readonly SharedProject[];
}

export function assignOwners(findings: readonly AccountFinding[]): ProjectOwners {
  const owners = new Map<string, string>();
  const also = new Map<string, string[]>();
  for (const { account, projectIds } of findings) {
    for (const id of projectIds) {
      const owner = owners.get(id);
      if (owner === undefined) owners.set(id, account);
      else if (owner !== account) {
        const seen = also.get(id) ?? [];
        if (!seen.includes(account)) also.set(id, [...seen, account]);
      }
    }
  }
  const shared = [...also].map(([projectId, alsoSeenBy]) => ({
    projectId,
    watchedBy: owners.get(projectId) ?? "",
    alsoSeenBy,
  }));
  return { owners, shared };
}
