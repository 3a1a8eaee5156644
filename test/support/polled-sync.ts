/**
 * A project's sync with the poll options every poll of a test uses: `step` polls and commits as
 * the daemon's account runner does, with the options of the moment.
 */
import type { PollOptions, ProjectSync, StepOutcome } from "../../src/sync/index.js";
import { ProjectSync as Sync } from "../../src/sync/project-sync.js";

export class PolledSync {
  constructor(
    readonly sync: ProjectSync,
    private readonly options: PollOptions,
  ) {}

  get state(): ProjectSync["state"] {
    return this.sync.state;
  }

  load(): ReturnType<ProjectSync["load"]> {
    return this.sync.load();
  }

  step(nowMs: number, signal?: AbortSignal): Promise<StepOutcome> {
    return this.sync.step(nowMs, this.options, signal);
  }
}

/** A sync of `projectId` over `store` and `source`, polling with `options`. */
export function polledSync(
  projectId: string,
  store: ConstructorParameters<typeof Sync>[1],
  source: ConstructorParameters<typeof Sync>[2],
  options: PollOptions,
): PolledSync {
  return new PolledSync(new Sync(projectId, store, source), options);
}
