/**
 * The detail levels of `/metrics` (declared with the `metrics.detail` setting) and the level of
 * a family: which levels serve it.
 */
import { DETAIL_LEVELS, type DetailLevel } from "../../config/index.js";
import type { MetricSpec } from "./family.js";

export { DEFAULT_DETAIL, DETAIL_LEVELS, type DetailLevel } from "../../config/index.js";

/** The least detail at which a family is served. */
export function levelOf(spec: MetricSpec): DetailLevel {
  return spec.level ?? "minimal";
}

/** Whether a family is served at a detail level: its own level or a later one. */
export function atLevel(spec: MetricSpec, detail: DetailLevel): boolean {
  return DETAIL_LEVELS.indexOf(levelOf(spec)) <= DETAIL_LEVELS.indexOf(detail);
}
