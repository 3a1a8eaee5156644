/**
 * `alerts:` and `incidents:` in the configuration: which alerts are raised and what they
 * carry, how many one project's outbox holds, and when failures across projects are alerted
 * as one platform incident.
 */
import { z } from "zod";
import { positiveDuration } from "./duration.js";

export const alertsSchema = z
  .object({
    /** Count a cancelled operation as failed (raise operation_failed). */
    cancelledIsFailure: z.boolean().default(false),
    /** Raise operation_retrying when failures_count grows. */
    retrying: z.boolean().default(false),
    /** Raise operation_recovered when a failed or stuck operation finishes. */
    recovered: z.boolean().default(true),
    /** Link in each alert: {project_id}, {operation_id}, {branch_id}, {endpoint_id}. */
    link: z.string().optional(),
    /**
     * The status page's address as people reach it (behind a proxy, an ingress): linked from the
     * alerts that can carry a link (PagerDuty incidents). None: no link.
     */
    statusPageUrl: z.url({ protocol: /^https?$/ }).optional(),
    /** Most alerts one project's outbox holds; newer ones are dropped and counted. */
    outboxLimit: z.number().int().min(1).default(10_000),
  })
  .strict();

export const incidentsSchema = z
  .object({
    /** `false`: every failure is alerted on its own. */
    enabled: z.boolean().default(true),
    /**
     * Failures this close together group; an incident nothing joins for this long resolves. At
     * most an hour.
     */
    window: positiveDuration.refine((s) => s <= 3600, "must be at most 1h").default(600),
    /** Projects whose failures make an incident. */
    minProjects: z.number().int().min(2).max(10_000).default(5),
  })
  .strict();
