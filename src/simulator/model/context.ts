import type { IdFactory } from "../ids.js";
import type { Scheduler } from "../scheduler.js";
import type { EndpointLifecycle } from "./endpoint-lifecycle.js";
import type { OperationRunner } from "./operation-runner.js";
import type { World } from "./state.js";

/** The parts every model service works with. */
export interface ModelContext {
  readonly world: World;
  readonly scheduler: Scheduler;
  readonly ids: IdFactory;
  readonly runner: OperationRunner;
  readonly lifecycle: EndpointLifecycle;
}
