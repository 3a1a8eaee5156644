import { createHash } from "node:crypto";
import { conflict, notFound } from "../errors.js";

/**
 * Who an API key belongs to: a user (a personal key) or an organisation (an org key). The
 * owner is the account the rate limit counts for.
 */
export type KeyOwner =
  | { readonly kind: "user"; readonly userId: string }
  | { readonly kind: "org"; readonly orgId: string };

export interface Organization {
  readonly id: string;
  readonly name: string;
  /** User ids, in the order they joined. */
  readonly members: string[];
}

/** Where a project lives: in an organisation, or else among its user's personal projects. */
export interface ProjectOwnership {
  readonly ownerId: string;
  readonly orgId: string | undefined;
}

/** The id of the user the simulator's main key (`SimulatorOptions.apiKey`) belongs to. */
export const DEFAULT_USER_ID = "sim-owner";

/** The owner named by `{user}` (a personal key) or `{org}` (an organisation's key). */
export function keyOwnerOf(spec: { readonly user: string } | { readonly org: string }): KeyOwner {
  return "user" in spec ? { kind: "user", userId: spec.user } : { kind: "org", orgId: spec.org };
}

/** The account a key owner stands for: the key of its project index and rate-limit bucket. */
export function accountOf(owner: KeyOwner): string {
  return owner.kind === "user" ? `user:${owner.userId}` : `org:${owner.orgId}`;
}

/** The account a project is listed under. */
export function projectAccount(project: ProjectOwnership): string {
  return project.orgId === undefined ? `user:${project.ownerId}` : `org:${project.orgId}`;
}

/**
 * Users, organisations and API keys. Users exist once something names them (a key or a
 * membership). Keys are stored by their SHA-256 digest, so that looking one up takes the same
 * time whichever of its characters differ from a stored key.
 */
export class Accounts {
  private readonly organizations = new Map<string, Organization>();
  private readonly keys = new Map<string, KeyOwner>();
  /** When each organisation was created (simulated µs), for the API's view of it. */
  private readonly createdUs = new Map<string, number>();

  addOrganization(
    id: string,
    name: string,
    members: readonly string[],
    createdUs: number,
  ): Organization {
    if (this.organizations.has(id)) throw conflict(`organization ${id} already exists`);
    const org: Organization = { id, name, members: [...new Set(members)] };
    this.organizations.set(id, org);
    this.createdUs.set(id, createdUs);
    return org;
  }

  organization(id: string): Organization | undefined {
    return this.organizations.get(id);
  }

  /** Every organisation, in creation order. */
  listOrganizations(): Organization[] {
    return [...this.organizations.values()];
  }

  addMember(orgId: string, userId: string): Organization {
    const org = this.requireOrganization(orgId);
    if (!org.members.includes(userId)) org.members.push(userId);
    return org;
  }

  addKey(key: string, owner: KeyOwner): void {
    if (owner.kind === "org") this.requireOrganization(owner.orgId);
    const digest = digestOf(key);
    if (this.keys.has(digest)) throw conflict("this API key is already in use");
    this.keys.set(digest, owner);
  }

  /** The owner of a presented key, or undefined for an unknown key. */
  ownerOf(key: string): KeyOwner | undefined {
    return this.keys.get(digestOf(key));
  }

  /**
   * The account whose projects a key lists with `GET /projects?org_id=`: a personal key's own
   * projects without `org_id`, an organisation's with the id of one its user belongs to; an org
   * key's own organisation (with or without its id). Anything else is refused like an unknown
   * organisation (404), so that a key learns nothing of organisations it cannot see.
   */
  listedAccount(owner: KeyOwner, orgId: string | undefined): string {
    if (orgId === undefined) return accountOf(owner);
    this.requireVisibleOrganization(owner, orgId);
    return `org:${orgId}`;
  }

  /**
   * Where a project created with a key goes: a personal key's user's personal projects, or the
   * organisation named (the user must belong to it); an org key's own organisation.
   */
  placement(owner: KeyOwner, orgId: string | undefined): ProjectOwnership {
    if (owner.kind === "org") {
      if (orgId !== undefined) this.requireVisibleOrganization(owner, orgId);
      return { ownerId: owner.orgId, orgId: owner.orgId };
    }
    if (orgId !== undefined) this.requireVisibleOrganization(owner, orgId);
    return { ownerId: owner.userId, orgId };
  }

  /** Whether a key may see a project (else every call on it answers 404). */
  canSee(owner: KeyOwner, project: ProjectOwnership): boolean {
    if (owner.kind === "org") return project.orgId === owner.orgId;
    if (project.orgId === undefined) return project.ownerId === owner.userId;
    return this.organizations.get(project.orgId)?.members.includes(owner.userId) === true;
  }

  /**
   * `GET /organizations/{org_id}`: an organisation a key may see (a member's personal key, or
   * its own org key); any other answers as an unknown one (404).
   */
  visibleOrganization(owner: KeyOwner, orgId: string): Organization {
    const org = this.organizations.get(orgId);
    const visible =
      org !== undefined &&
      (owner.kind === "org" ? owner.orgId === orgId : org.members.includes(owner.userId));
    if (!visible) throw notFound(`organization ${orgId} not found`);
    return org;
  }

  /** When an organisation was created (simulated µs). */
  createdUsOf(orgId: string): number {
    return this.createdUs.get(orgId) ?? 0;
  }

  private requireVisibleOrganization(owner: KeyOwner, orgId: string): void {
    this.visibleOrganization(owner, orgId);
  }

  private requireOrganization(orgId: string): Organization {
    const org = this.organizations.get(orgId);
    if (org === undefined) throw notFound(`organization ${orgId} not found`);
    return org;
  }
}

function digestOf(key: string): string {
  return createHash("sha256").update(key, "utf8").digest("hex");
}
