import type { ClockMode } from "./clock.js";
import type { RateLimitOptions } from "./http/rate-limiter.js";
import type { TrafficOptions } from "./traffic/options.js";

export interface SimulatorOptions {
  /** 0 (the default) picks a free port. */
  readonly port?: number;
  /** Default 127.0.0.1. */
  readonly host?: string;
  /** Seed of every random stream: ids, traffic, fault rates. Default: a random one. */
  readonly seed?: number;
  /** The key clients must send as `Authorization: Bearer <apiKey>`. */
  readonly apiKey: string;
  readonly clock: ClockMode;
  /**
   * Simulated time at start. Default: 2025-01-01T00:00:00Z for the manual clock (so runs
   * repeat exactly), the wall time for the real clock (which then follows the wall clock).
   */
  readonly startTime?: Date;
  /** Default: the real API's 700 per minute and 40 per second per route. `false`: no limit. */
  readonly rateLimit?: RateLimitOptions | false;
  /**
   * Period of the availability checker's `check_availability` operations, in seconds; 0
   * switches it off. Default: 0, or 600 when traffic is generated.
   */
  readonly availabilityCheckSeconds?: number;
  /** Generated activity across many projects; default none. */
  readonly traffic?: TrafficOptions | false;
}

/** Start of simulated time for the manual clock when no start time is given. */
export const DEFAULT_MANUAL_START = new Date("2025-01-01T00:00:00Z");

/** Availability check period used with traffic when none is given. */
export const TRAFFIC_AVAILABILITY_CHECK_SECONDS = 600;

/** How often a real clock applies due events when no request arrives. */
export const REAL_CLOCK_TICK_MS = 100;
