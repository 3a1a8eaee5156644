/**
 * What the view reads of each watched project (the shared `ProjectViews` satisfies it), and a
 * project's name from there.
 */
import type { ProjectView } from "../../sync/index.js";
import { nameOrUndefined, type Clean } from "./text.js";

/** What the view reads of each project: the shared `ProjectViews` satisfies it. */
export interface StatusSource {
  /** The watched projects, in the daemon's order. */
  watched(): readonly string[];
  get(projectId: string): ProjectView | undefined;
}

/** A project's name, cleaned as every text from outside is; undefined while unknown. */
export function projectNameOf(
  source: StatusSource,
  projectId: string,
  clean: Clean,
): string | undefined {
  return nameOrUndefined(source.get(projectId)?.info?.name, clean);
}
