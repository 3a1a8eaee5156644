/**
 * Replicas of the real daemon sharing one Postgres state store, for the Postgres tests and the
 * handover benchmark: each started from one configuration file, known by its replica id (from
 * its "exporter started" line) and the address of its HTTP server; and what the lease table says
 * of them, by the database's clock.
 */
import path from "node:path";
import type pg from "pg";
import { QUICK_POLL, UNTHROTTLED_API, writeDaemonConfig } from "./daemon-config.js";
import type { DaemonGroup, DaemonOptions, DaemonProcess } from "./daemon-process.js";

export interface Replica {
  readonly name: string;
  readonly cli: DaemonProcess;
  /** Its id in the lease tables. */
  readonly id: string;
  /** Its HTTP server: `/metrics`, the status page. */
  readonly url: string;
}

/**
 * Writes the configuration the replicas share to `file`: every project of the API at `apiUrl`,
 * polled twice a second, on the Postgres store at `stateUrl` with leases of `leaseSeconds`,
 * logging at info (the lines that give a replica's id and address).
 */
export async function writeReplicaConfig(
  file: string,
  options: { readonly apiUrl: string; readonly stateUrl: string; readonly leaseSeconds: number },
): Promise<void> {
  await writeDaemonConfig(file, {
    api: { url: options.apiUrl, ...UNTHROTTLED_API },
    projects: "all",
    state: {
      dir: path.join(path.dirname(file), "unused"),
      url: options.stateUrl,
      leaseDuration: options.leaseSeconds,
    },
    poll: QUICK_POLL,
    log: { level: "info" },
  });
}

/** Starts a replica; throws, with what it wrote, if it exits before it has started. */
export async function launchReplica(
  daemons: DaemonGroup,
  name: string,
  configFile: string,
  options: DaemonOptions = {},
): Promise<Replica> {
  const cli = daemons.spawn(configFile, options);
  const started = await cli.startedOrExit;
  if (started === undefined) throw new Error(`${name} exited before it started:\n${cli.tail()}`);
  return { name, cli, id: String(started.replica), url: await cli.url };
}

/** Each project's live holder (a lease not expired by the database's clock), if any. */
export async function liveHolders(db: Pick<pg.Pool, "query">): Promise<Map<string, string>> {
  const { rows } = await db.query<{ project_id: string; holder: string }>(
    "SELECT project_id, holder FROM pgcp_leases WHERE holder IS NOT NULL AND expires_at > now()",
  );
  return new Map(rows.map((r) => [r.project_id, r.holder]));
}

/** The projects `replica` holds a live lease on, sorted. */
export async function heldBy(db: Pick<pg.Pool, "query">, replica: Replica): Promise<string[]> {
  return [...(await liveHolders(db))]
    .filter(([, holder]) => holder === replica.id)
    .map(([project]) => project)
    .sort();
}
