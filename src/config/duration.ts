import { z } from "zod";

const UNITS: Record<string, number> = { ms: 0.001, s: 1, m: 60, h: 3600, d: 86_400 };

/**
 * Parses a duration such as `30s`, `5m`, `1h30m`, `7d` or a plain number of seconds into
 * seconds; undefined when it is not one.
 */
export function parseDuration(text: string): number | undefined {
  const trimmed = text.trim();
  if (/^\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  const parts = [...trimmed.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h|d)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== trimmed) return undefined;
  return parts.reduce((sum, p) => sum + Number(p[1]) * (UNITS[p[2] ?? ""] ?? 0), 0);
}

/** What a duration setting reads: a number of seconds or a string (told apart in messages). */
export const durationInput = z.union([z.number(), z.string()]);

/** A duration in config: a number of seconds or a string like `90s`, `5m`, `1h`. */
export const durationSchema = durationInput.transform((value, ctx) => {
  const seconds = typeof value === "number" ? value : parseDuration(value);
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) {
    ctx.addIssue({
      code: "custom",
      message: `not a duration (use seconds or a value like "30s", "5m", "1h"): ${JSON.stringify(value)}`,
    });
    return z.NEVER;
  }
  return seconds;
});

/** A duration that must be greater than zero. */
export const positiveDuration = durationSchema.refine((s) => s > 0, "must be greater than zero");
