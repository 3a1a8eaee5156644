/**
 * A project sync that must never poll, for the tests of how a state store hands a sync its
 * state (loading it, refusing a bad file or row): its source rejects every request, and its
 * settings are small. The tests never get as far as polling.
 */
import { polledSync, type PolledSync } from "./polled-sync.js";

const unreachableSource = {
  listOperations: () => Promise.reject(new Error("not reached")),
  getOperation: () => Promise.reject(new Error("not reached")),
};

const syncOptions = {
  firstPageLimit: 10,
  pageLimit: 10,
  maxPagesPerPoll: 1,
  firstStartLookbackSeconds: 60,
  backfillSeconds: 0,
  watchFailedSeconds: 60,
  stuckAfterSeconds: () => 60,
};

/** A sync of `projectId` over `store` that never polls. */
export function neverPollingSync(
  projectId: string,
  store: Parameters<typeof polledSync>[1],
): PolledSync {
  return polledSync(projectId, store, unreachableSource, syncOptions);
}
