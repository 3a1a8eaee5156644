/**
 * The open platform incidents as the page shows them: those some watched project's committed
 * state carries (each once), oldest first and capped, with their first projects named. They span
 * projects, so the filter keeps them whole.
 */
import type { CarriedIncident } from "../../store/index.js";
import type { StatusLimits } from "../shared/limits.js";
import { NewestFirst } from "../shared/newest-first.js";
import { projectNameOf, type StatusSource } from "../shared/source.js";
import type { Clean } from "../shared/text.js";

/**
 * An open platform incident: failures of one action, in one region, with one error class, across
 * many projects (`alerts/rules/incidents.ts`), as the project carrying it committed it.
 */
export interface IncidentView {
  readonly id: string;
  readonly action: string;
  readonly regionId: string;
  /** The error text with ids and numbers taken out (from outside: escape it). */
  readonly errorClass: string;
  /** When its first failure was detected (epoch ms). */
  readonly firstAtMs: number;
  /** When its latest failure was detected (epoch ms). */
  readonly lastAtMs: number;
  readonly failures: number;
  /** Its projects, watched or not. */
  readonly projectCount: number;
  /**
   * The first projects to join (at most `limits.incidentProjectsShown`), each with its name
   * (from outside: escape it) once known.
   */
  readonly projects: readonly { readonly id: string; readonly name: string | undefined }[];
}

/** The oldest open incidents (at most the limit), each with its first projects named. */
export function incidentsOf(
  carried: ReadonlyMap<string, CarriedIncident>,
  source: StatusSource,
  limits: StatusLimits,
  clean: Clean,
): { open: number; shown: IncidentView[] } {
  // The largest keys of the negated start: the oldest, oldest first.
  const oldest = new NewestFirst<CarriedIncident>(limits.incidentsShown);
  for (const incident of carried.values()) oldest.add(-incident.firstAtMs, incident);
  const shown = oldest.items().map((incident) => ({
    id: incident.id,
    action: incident.action,
    regionId: incident.regionId,
    errorClass: clean(incident.errorClass),
    firstAtMs: incident.firstAtMs,
    lastAtMs: incident.lastAtMs,
    failures: incident.failures,
    projectCount: Math.max(incident.projectCount, incident.projects.length),
    projects: incident.projects
      .slice(0, limits.incidentProjectsShown)
      .map((id) => ({ id, name: projectNameOf(source, id, clean) })),
  }));
  return { open: carried.size, shown };
}
