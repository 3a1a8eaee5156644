/**
 * `poll:` and `stuck:` in the configuration: how often each project is polled and how the
 * intervals follow the rate limit's budget, how far back a first start looks, and how long an
 * operation may stay open before it counts as stuck.
 */
import { z } from "zod";
import { durationSchema, positiveDuration } from "./duration.js";

export const pollSchema = z
  .object({
    /** How often a project without open operations is polled. */
    interval: positiveDuration.default(30),
    /** How often a project with open operations is polled (the seed suggests 5 s). */
    fastInterval: positiveDuration.default(5),
    /**
     * How often each project's endpoints are listed besides when an operation that changes them
     * starts or ends (a refresh for drift); 0 turns the listing off.
     */
    endpointsInterval: durationSchema.default(600),
    /** Random spread of each due time, as a share of the interval. */
    jitter: z.number().min(0).max(0.5).default(0.1),
    /** Share of the rate limit the scheduler plans to spend; the rest absorbs retries. */
    headroom: z.number().gt(0).max(1).default(0.9),
    /**
     * How intervals follow the budget: `activity` (projects with recent operations keep their
     * interval, idle ones stretch first) or `uniform` (every interval stretches by one factor).
     */
    strategy: z.enum(["activity", "uniform"]).default("activity"),
    /**
     * The longest a project waits between polls (activity strategy); `auto`: twice the interval
     * the uniform strategy would give every project.
     */
    maxInterval: z.union([z.literal("auto"), positiveDuration]).default("auto"),
    /**
     * The longest wait between two polls of a project whose polls fail on the API's side (server
     * errors, timeouts, malformed answers): each wait twice the last, from twice its interval.
     */
    errorBackoffMax: positiveDuration.default(300),
    /** How long after its last new or changed operation a project counts as active. */
    activeWindow: positiveDuration.default(3600),
    firstPageLimit: z.number().int().min(1).max(1000).default(50),
    pageLimit: z.number().int().min(1).max(1000).default(500),
    /** Pages one poll reads before it commits and goes on in the next poll (catch-up). */
    maxPagesPerPoll: z.number().int().min(1).default(20),
    /** First start: how far back to look for open operations to follow. */
    firstStartLookback: durationSchema.default(3600),
    /** First start: count the operations created within this window (0 = off). */
    backfill: durationSchema.default(0),
    /** How long a failed operation is watched in case the service retries it. */
    watchFailed: durationSchema.default(1800),
    /**
     * How far into the future a record's `created_at` may lie (server clock skew); the
     * checkpoint never moves past now plus this.
     */
    futureTolerance: durationSchema.default(3600),
  })
  .strict();

export const stuckSchema = z
  .object({
    /** How long an operation may stay open before it counts as stuck. */
    default: positiveDuration.default(900),
    /** Per-action thresholds. */
    actions: z.record(z.string(), positiveDuration).default({ start_compute: 120 }),
  })
  .strict();
