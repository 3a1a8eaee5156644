import type { ClockMode } from "./clock.js";
import type { ComputeHostOptions } from "./computes/options.js";
import type { RateLimitOptions } from "./http/rate-limiter.js";
import type { TrafficOptions } from "./traffic/options.js";

export interface SimulatorOptions {
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Seed of every random stream: ids, traffic, fault rates. Default: a random one. */
  readonly seed?: number;
  /**
   * The key clients must send as `Authorization: Bearer <apiKey>`: the personal key of the
   * default user (`sim-owner`), who owns every project created without an organisation.
   */
  readonly apiKey: string;
  /** Organisations to create at start, in order; default none. */
  readonly organizations?: readonly OrganizationOptions[];
  /** Further API keys: personal keys of users, or keys of organisations; default none. */
  readonly apiKeys?: readonly ApiKeyOptions[];
  readonly clock: ClockMode;
  /**
   * Simulated time at start. Default: 2025-01-01T00:00:00Z for the manual clock (so runs
   * repeat exactly), the wall time for the real clock (which then follows the wall clock).
   */
  readonly startTime?: Date;
  /**
   * Real clock only: simulated seconds per wall-clock second (default 1). At 60, an hour of
   * traffic, operations and auto-suspends passes in a minute; the `Date` of every answer is
   * the simulated time. The rate limit stays on the wall clock.
   */
  readonly speed?: number;
  /** Default: the real API's 700 per minute and 40 per second per route. `false`: no limit. */
  readonly rateLimit?: RateLimitOptions | false;
  /**
   * Period of the availability checker's `check_availability` operations, in seconds; 0
   * switches it off. Default: 600 (the control plane's own load is always there).
   */
  readonly availabilityCheckSeconds?: number;
  /** Generated activity across many projects; default none. */
  readonly traffic?: TrafficOptions | false;
  /**
   * Computes backed by a real PostgreSQL server: each live endpoint listens on a loopback
   * address of its own (its `host`) on one shared port, and forwards clients' sessions to
   * the server (see README.md, Computes). Default: none (hosts resolve nowhere).
   */
  readonly computes?: ComputeHostOptions;
}

export interface OrganizationOptions {
  /** Default: generated (`org-<words>-<8 digits>`). */
  readonly id?: string;
  readonly name: string;
  /** User ids; a user exists once a key or a membership names it. */
  readonly members?: readonly string[];
  /** Keys of the organisation (org keys: they see its projects only). */
  readonly apiKeys?: readonly string[];
  /**
   * Projects created in it at start (paid, one branch; default 0). With traffic, the traffic
   * keeps them busy too.
   */
  readonly projects?: number;
}

/** A personal key of a user, or a key of an organisation (given by id). */
export type ApiKeyOptions =
  { readonly key: string; readonly user: string } | { readonly key: string; readonly org: string };

/** Start of simulated time for the manual clock when no start time is given. */
export const DEFAULT_MANUAL_START = new Date("2025-01-01T00:00:00Z");

/** Availability check period when none is given (seed 2.2's periodic load). */
export const DEFAULT_AVAILABILITY_CHECK_SECONDS = 600;

/** How often a real clock applies due events when no request arrives. */
export const REAL_CLOCK_TICK_MS = 100;
