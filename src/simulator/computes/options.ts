/** How the simulator hosts its endpoints' computes on a real PostgreSQL server. */
export interface ComputeHostOptions {
  /**
   * A superuser URL of a real PostgreSQL server, reached over TCP (host and port): clients'
   * sessions are forwarded there, and the simulator keeps its views and tables in it.
   */
  readonly postgresUrl: string;
  /** The port every endpoint's loopback address listens on; 0 or absent: a free one. */
  readonly port?: number;
  /** The database clients use, where `neon_stat_file_cache` lives; created if missing. */
  readonly database?: string;
  /** A login role (not a superuser) the simulator creates, or updates, for clients. */
  readonly role?: { readonly name: string; readonly password: string };
}

export const DEFAULT_COMPUTE_DATABASE = "neondb";

/** The `application_name` of the simulator's own sessions: never a client, never activity. */
export const SIMULATOR_APPLICATION_NAME = "pgcp-simulator";
