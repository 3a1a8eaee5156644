import { badRequest } from "../errors.js";

/**
 * The regions the simulator serves, named like the real API's region ids (`aws-us-east-2`:
 * platform `aws`, then the cloud region). A project is created in one of them; its endpoints
 * are in the same one (the real API: "Only the project's `region_id` is permitted"). Host
 * names use the reserved `.invalid` TLD: nothing resolves.
 */
export interface Region {
  /** `region_id` on the wire. */
  readonly id: string;
  /** `platform_id` on the wire. */
  readonly platformId: string;
  /** The region's shared proxy host (`proxy_host`); endpoint hosts are `<endpoint id>.<it>`. */
  readonly proxyHost: string;
}

const SIM_DOMAIN = "pgcp-sim.invalid";

function awsRegion(name: string): Region {
  return { id: `aws-${name}`, platformId: "aws", proxyHost: `${name}.aws.${SIM_DOMAIN}` };
}

/** Where a project goes when its creation names no region. */
export const DEFAULT_REGION: Region = awsRegion("us-east-2");

/** Every region, the default first. */
export const REGIONS: readonly Region[] = [
  DEFAULT_REGION,
  awsRegion("us-east-1"),
  awsRegion("us-west-2"),
  awsRegion("eu-central-1"),
  awsRegion("eu-west-2"),
  awsRegion("ap-southeast-1"),
];

export const DEFAULT_REGION_ID = DEFAULT_REGION.id;
export const REGION_IDS: readonly string[] = REGIONS.map((r) => r.id);

const BY_ID = new Map(REGIONS.map((r) => [r.id, r]));

/** The region of an id, or undefined for one the simulator does not serve. */
export function findRegion(id: string): Region | undefined {
  return BY_ID.get(id);
}

/** Why a region id is refused: it names the ones the simulator serves. */
export function unknownRegionMessage(id: string): string {
  return `unknown region ${id} (the simulator has ${REGION_IDS.join(", ")})`;
}

/** The region a request names (400 for an unknown one), or the default when it names none. */
export function regionFor(regionId: string | undefined): Region {
  if (regionId === undefined) return DEFAULT_REGION;
  const region = findRegion(regionId);
  if (region === undefined) throw badRequest(`region_id: ${unknownRegionMessage(regionId)}`);
  return region;
}
