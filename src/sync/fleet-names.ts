/**
 * What is shown of a project and its branches beside their ids (names, account, organisation,
 * region), as the daemon reports it, and the lookup the alerts read names from. Metrics join on
 * it (`pgcp_project_info`, `pgcp_branch_info`); alerts show each name beside its id, the id alone
 * while the name is unknown.
 */

/** A project's names and where it lives, from the projects list or the project itself. */
export interface ProjectInfo {
  readonly name: string;
  /** The configured account it is watched under. */
  readonly account: string;
  /** Its organisation, when it belongs to one. */
  readonly orgId: string | undefined;
  /** The organisation's name, once read. */
  readonly orgName: string | undefined;
  readonly regionId: string | undefined;
  readonly pgVersion: number | undefined;
}

/** A branch of a project, as its latest listing had it (or had it, within the grace). */
export interface BranchInfo {
  readonly id: string;
  readonly name: string;
  /** The branch it was created from; undefined for the root branch. */
  readonly parentId: string | undefined;
  /** The project's default branch. */
  readonly isDefault: boolean;
}

/** Names beside ids, for what alerts say; undefined while a name is unknown. */
export interface NameLookup {
  projectName(projectId: string): string | undefined;
  branchName(projectId: string, branchId: string): string | undefined;
  endpointName(projectId: string, endpointId: string): string | undefined;
  /** The project's region, once read (platform incidents group failures by it). */
  projectRegion?(projectId: string): string | undefined;
}
