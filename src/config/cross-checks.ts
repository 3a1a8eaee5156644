/**
 * The configuration's checks that read more than one section: the single-key settings against
 * `accounts`, the operations archive against the state store, the compute probe against the
 * endpoint listings, and the sinks that silences name. Each reads the settings loosely, as they
 * may be invalid elsewhere, so that every problem is listed at once.
 */
import type { z } from "zod";
import { parseDuration } from "./duration.js";
import { SINK_ENVIRONMENT } from "./sinks-schema.js";

/**
 * Without `accounts`, the single-key settings make one account and are required; with it,
 * the projects belong in the accounts. Reads the input loosely: it may be invalid elsewhere.
 */
export function checkAccounts(
  config: { api?: { key?: unknown }; projects?: unknown; accounts?: unknown },
  ctx: z.core.$RefinementCtx,
): void {
  if (config.accounts !== undefined) {
    if (config.projects !== undefined) {
      ctx.addIssue({
        code: "custom",
        path: ["projects"],
        message: "is set with accounts: list each account's projects under accounts instead",
      });
    }
    return;
  }
  if (config.api?.key === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["api", "key"],
      message: "is required (set PGCP_API_KEY)",
    });
  }
  if (config.projects === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["projects"],
      message:
        "is required: a list of project ids, or all (set PGCP_PROJECTS or --projects), or accounts",
    });
  }
}

/** The archive needs the Postgres store. Reads the input loosely, as `checkAccounts`. */
export function checkHistory(
  config: { history?: unknown; state?: { url?: unknown } },
  ctx: z.core.$RefinementCtx,
): void {
  if (config.history === "postgres" && config.state?.url === undefined) {
    ctx.addIssue({
      code: "custom",
      path: ["history"],
      message: "postgres needs the Postgres state store (set state.url or PGCP_STATE_URL)",
    });
  }
}

/**
 * The compute probe reads only endpoints whose latest listing says they are active: it needs the
 * listings. Reads the input loosely, as `checkAccounts`.
 */
export function checkComputeListings(
  config: {
    computes?: { enabled?: unknown };
    accounts?: unknown;
    poll?: { endpointsInterval?: unknown };
  },
  ctx: z.core.$RefinementCtx,
): void {
  const interval = config.poll?.endpointsInterval;
  const seconds = typeof interval === "string" ? parseDuration(interval) : interval;
  if (seconds !== 0) return;
  const accounts = Array.isArray(config.accounts) ? (config.accounts as unknown[]) : [];
  const accountOn = accounts.some(
    (a) => isRecord(a) && isRecord(a.computes) && a.computes.enabled === true,
  );
  if (config.computes?.enabled === true || accountOn) {
    ctx.addIssue({
      code: "custom",
      path: ["poll", "endpointsInterval"],
      message:
        "is 0, which turns the endpoint listings off: the compute probe reads only endpoints a listing says are active (give an interval, e.g. 10m)",
    });
  }
}

/**
 * Each sink a silence names that is not configured (with none configured, the sinks taken from
 * the environment). Read from the settings before validation, as `resolveConfig` checks them,
 * so that it is reported with every other problem, also of a silence that is wrong elsewhere.
 */
export function silenceSinkProblems(
  config: unknown,
): { readonly path: PropertyKey[]; readonly message: string }[] {
  const listed = isRecord(config) && Array.isArray(config.sinks) ? (config.sinks as unknown[]) : [];
  const names = listed.flatMap((sink) => {
    const name = isRecord(sink) ? sink.name : undefined;
    return typeof name === "string" ? [name] : [];
  });
  const sinkNames = new Set(listed.length > 0 ? names : Object.keys(SINK_ENVIRONMENT));
  const silences =
    isRecord(config) && Array.isArray(config.silences) ? (config.silences as unknown[]) : [];
  return silences.flatMap((silence, i) => {
    const sinks = isRecord(silence) && Array.isArray(silence.sinks) ? silence.sinks : [];
    return sinks.flatMap((name: unknown, j) =>
      typeof name === "string" && !sinkNames.has(name)
        ? [
            {
              path: ["silences", i, "sinks", j],
              message: `no sink is named ${name} (sinks: ${[...sinkNames].join(", ") || "none"})`,
            },
          ]
        : [],
    );
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
