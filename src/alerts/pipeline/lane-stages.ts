/**
 * The stages of one run of a sink's lane, in order:
 *
 *   expire → pace → refresh (when due, and the run ends there) → choose → send → settle
 *
 * `expire` dead-letters alerts older than the sink's maximum age; `pace` ends the run while
 * the sink's pace (or a 429's pause) holds it; `refresh` sends a firing set again; `choose`
 * picks the next message (`nextBatch`) and puts the names known now on its alerts; `send` makes
 * one attempt; `settle` carries out what its outcome leads to (`settlement`): acknowledge,
 * dead-letter, or back off. The decisions are pure functions of `delivery-plan.ts`; the stages
 * are the I/O around them. A run says whether it did anything, so that a lane that could do
 * nothing is not run again at once.
 */
import type { Clock } from "../../clock.js";
import { errorFields, type Logger } from "../../logger.js";
import {
  acknowledge,
  acknowledgeFiring,
  alertForSink,
  deadLetter,
  expireFiring,
  settleEnded,
  type Alert,
  type FiringAlert,
  type OutboxEntry,
} from "../../store/index.js";
import type { NameLookup } from "../../sync/index.js";
import { withNames } from "../rules/names.js";
import type { FiringKeeper, SendResult } from "../sinks/sink.js";
import { expired, nextBatch, retryDelayMs, settlement } from "./delivery-plan.js";
import type { EntryBirths } from "./entry-births.js";
import type { OutboxOwner, SinkLane } from "./sink-lane.js";

/** The least time between two messages to one sink: at most four a second, whatever the sink. */
export const MIN_PACE_MS = 250;

/** What the delivery reports (metrics subscribe). */
export interface NotifierObserver {
  delivered?(sink: string, alerts: readonly Alert[], latencySeconds: readonly number[]): void;
  deliveryFailed?(
    sink: string,
    reason: Extract<SendResult, { ok: false }>["reason"],
    alerts: number,
  ): void;
  deadLettered?(sink: string, alerts: readonly Alert[], reason: string): void;
}

/** What every stage may use. */
export interface LaneEnv {
  readonly ownerOf: (projectId: string) => OutboxOwner | undefined;
  readonly clock: Clock;
  readonly births: EntryBirths;
  readonly names: NameLookup | undefined;
  readonly logger: Logger;
  readonly observer: NotifierObserver | undefined;
  readonly signal: AbortSignal;
  readonly random: () => number;
}

/** A message chosen for the sink: its project, its entries, its alerts as sent. */
interface Chosen {
  readonly owner: OutboxOwner;
  readonly entries: readonly OutboxEntry[];
  /** Each entry's alert as this sink is sent it (a recovery names what the sink was sent). */
  readonly alerts: readonly Alert[];
}

/** One run of the lane; resolves with whether it did anything (sent, or changed an outbox). */
export async function runLane(lane: SinkLane, env: LaneEnv): Promise<boolean> {
  try {
    const owners = lane.pendingOwners(env.ownerOf);
    let did = await expireStage(lane, owners, env);
    if (env.clock.monotonic() < lane.notBeforeMs) return did;
    const keeper = lane.sink.firing;
    if (keeper !== undefined && env.clock.monotonic() >= lane.nextRefreshMs) {
      const firing = lane.firingOwners(env.ownerOf);
      if (firing.length > 0) return (await refreshStage(lane, keeper, firing, env)) || did;
    }
    const chosen = chooseStage(lane, owners, env);
    if (chosen === undefined) return did;
    const result = await sendStage(lane, chosen, env);
    if (env.signal.aborted) return true;
    did = true;
    await settleStage(lane, chosen, result, env);
    return did;
  } catch (error) {
    // A commit of an outbox failed: the alerts stay pending and are tried again.
    env.logger.error(
      { sink: lane.name, ...errorFields(error) },
      "notifier could not update an outbox",
    );
    return false;
  }
}

/** Moves alerts older than the sink's maximum age to the dead letters. */
async function expireStage(
  lane: SinkLane,
  owners: readonly OutboxOwner[],
  env: LaneEnv,
): Promise<boolean> {
  let did = false;
  const now = env.clock.monotonic();
  for (const owner of owners) {
    const old = expired(owner.state?.outbox ?? [], lane.policy, now, (e) => env.births.birthOf(e));
    if (old.length === 0) continue;
    const alerts = old.map((e) => e.alert);
    did = (await giveUp(owner, lane.name, alerts, "max_age", env)) || did;
    env.logger.error(
      {
        sink: lane.name,
        project: owner.projectId,
        alerts: alerts.length,
        maxAgeSeconds: lane.policy.maxAgeMs / 1000,
      },
      "alerts were not delivered within the sink's maximum age; they are dead-lettered",
    );
  }
  return did;
}

/**
 * Sends the sink's firing set again (and its ended alerts once, resolved): alerts that have fired
 * for the sink's `firingForMs` end first, and ended alerts the sink took leave the set. A failure
 * is logged and tried again at the next interval; nothing is lost meanwhile.
 */
async function refreshStage(
  lane: SinkLane,
  keeper: FiringKeeper,
  owners: readonly OutboxOwner[],
  env: LaneEnv,
): Promise<boolean> {
  lane.nextRefreshMs = env.clock.monotonic() + keeper.resendIntervalMs;
  // How long alerts have fired is kept across restarts, so it is read on the wall clock.
  const now = env.clock.wall();
  const sent = await endOverdue(lane.name, keeper, owners, now);
  const result = await keeper.refresh(
    sent.flatMap((s) => s.firing).map((f) => named(f, env.names)),
    env.signal,
  );
  if (env.signal.aborted) return true;
  if (!result.ok) {
    const alerts = sent.reduce((n, s) => n + s.firing.length, 0);
    env.observer?.deliveryFailed?.(lane.name, result.reason, alerts);
    env.logger.warn(
      { sink: lane.name, reason: result.reason, detail: result.detail },
      "re-sending the firing alerts failed; will try again at the next interval",
    );
    return true;
  }
  for (const { owner, firing } of sent) {
    if (!firing.some((f) => f.endedAtMs !== undefined)) continue;
    await owner.updateOutbox(env.clock.wall(), (s) => ({
      outbox: s.outbox,
      deadLetters: s.deadLetters,
      firing: settleEnded(s.firing ?? [], lane.name, firing),
    }));
  }
  return true;
}

/** Ends (and commits) what has fired for the sink's `firingForMs`; returns each set to send. */
async function endOverdue(
  sink: string,
  keeper: FiringKeeper,
  owners: readonly OutboxOwner[],
  nowMs: number,
): Promise<{ owner: OutboxOwner; firing: FiringAlert[] }[]> {
  const sent: { owner: OutboxOwner; firing: FiringAlert[] }[] = [];
  for (const owner of owners) {
    const all = owner.state?.firing ?? [];
    const ended = expireFiring(all, sink, keeper.firingForMs, nowMs);
    if (ended.some((f, i) => f !== all[i])) {
      await owner.updateOutbox(nowMs, (s) => ({
        outbox: s.outbox,
        deadLetters: s.deadLetters,
        firing: expireFiring(s.firing ?? [], sink, keeper.firingForMs, nowMs),
      }));
    }
    sent.push({ owner, firing: ended.filter((f) => f.sink === sink) });
  }
  return sent;
}

/** The next message: `nextBatch` over the projects with alerts pending for the sink. */
function chooseStage(
  lane: SinkLane,
  owners: readonly OutboxOwner[],
  env: LaneEnv,
): Chosen | undefined {
  const batch = nextBatch(
    owners.map((o) => ({
      projectId: o.projectId,
      outbox: o.state?.outbox ?? [],
      retryAtMs: lane.backoff.get(o.projectId)?.retryAtMs,
    })),
    lane.policy,
    env.clock.monotonic(),
    (entry) => env.births.birthOf(entry),
  );
  const owner = owners.find((o) => o.projectId === batch?.projectId);
  if (batch === undefined || owner === undefined) return undefined;
  const entries = again(lane, owner, batch.entries);
  const alerts = entries.map((e) => alertForSink(e, lane.name));
  return { owner, entries, alerts };
}

/**
 * A project's next batch, or, after an attempt that failed or was not acknowledged, that
 * attempt's alerts still pending (in the same order), so that the repeat is the same message.
 */
function again(
  lane: SinkLane,
  owner: OutboxOwner,
  batch: readonly OutboxEntry[],
): readonly OutboxEntry[] {
  const unsettled = lane.unsettled.get(owner.projectId);
  if (unsettled === undefined) return batch;
  const pending = (owner.state?.outbox ?? []).filter(
    (e) => unsettled.has(e.alert.id) && e.pending.includes(lane.name),
  );
  if (pending.length > 0) return pending;
  lane.unsettled.delete(owner.projectId);
  return batch;
}

/** One attempt, with the names known now; the sink's pace starts again after it. */
async function sendStage(lane: SinkLane, chosen: Chosen, env: LaneEnv): Promise<SendResult> {
  const result = await lane.sink.send(
    chosen.alerts.map((alert) => withNames(alert, env.names)),
    env.signal,
    { firing: (chosen.owner.state?.firing ?? []).map((f) => named(f, env.names)) },
  );
  lane.notBeforeMs = env.clock.monotonic() + Math.max(MIN_PACE_MS, lane.sink.minIntervalMs);
  return result;
}

/** Carries out what the attempt's outcome leads to, and says so in the log and the metrics. */
async function settleStage(
  lane: SinkLane,
  chosen: Chosen,
  result: SendResult,
  env: LaneEnv,
): Promise<void> {
  const { owner, alerts } = chosen;
  const decided = settlement(
    result,
    lane.backoff.get(owner.projectId)?.failures ?? 0,
    env.random(),
  );
  const fields = { sink: lane.name, project: owner.projectId, alerts: alerts.length };
  if (decided.kind === "acknowledge") {
    await acknowledgeSent(lane, chosen, env);
    env.logger.info(fields, "alerts delivered");
    return;
  }
  if (result.ok) return;
  env.observer?.deliveryFailed?.(lane.name, result.reason, alerts.length);
  const said = { ...fields, reason: result.reason, detail: result.detail };
  if (decided.kind === "dead_letter") {
    await giveUp(owner, lane.name, alerts, result.reason, env, decided.text);
    env.logger.error(said, "sink refused the alerts for good; they are dead-lettered");
    return;
  }
  const now = env.clock.monotonic();
  lane.backoff.set(owner.projectId, {
    failures: decided.failures,
    retryAtMs: now + decided.delayMs,
  });
  lane.unsettled.set(owner.projectId, new Set(alerts.map((a) => a.id)));
  if (decided.holdSink) lane.notBeforeMs = Math.max(lane.notBeforeMs, now + decided.delayMs);
  env.logger.warn({ ...said, retryInMs: decided.delayMs }, "alert delivery failed; will retry");
}

/** Acknowledges a delivered message: its alerts leave the pending list and, with a firing set,
 * fire (a recovery ends what it resolves) until they end. */
async function acknowledgeSent(lane: SinkLane, chosen: Chosen, env: LaneEnv): Promise<void> {
  const { owner, alerts, entries } = chosen;
  const wall = env.clock.wall();
  const ids = new Set(alerts.map((a) => a.id));
  const failures = lane.backoff.get(owner.projectId)?.failures ?? 0;
  try {
    await owner.updateOutbox(wall, (s) => ({
      outbox: acknowledge(s.outbox, lane.name, ids),
      deadLetters: s.deadLetters,
      ...(lane.sink.firing === undefined
        ? {}
        : { firing: acknowledgeFiring(s.firing ?? [], lane.name, alerts, wall) }),
    }));
  } catch (error) {
    // Delivered, but not acknowledged (the store is out of reach): sending again at once would
    // only repeat the delivery, so the project backs off as after a failed attempt, and sends
    // the same message again.
    lane.unsettled.set(owner.projectId, ids);
    const delayMs = retryDelayMs(failures + 1, undefined, env.random());
    lane.backoff.set(owner.projectId, {
      failures: failures + 1,
      retryAtMs: env.clock.monotonic() + delayMs,
    });
    throw error;
  }
  lane.backoff.delete(owner.projectId);
  lane.unsettled.delete(owner.projectId);
  const keeper = lane.sink.firing;
  if (keeper !== undefined) {
    // The first alert to fire waits a whole interval before it is sent again.
    if (lane.firingOwners(env.ownerOf).every((o) => o === owner)) {
      lane.nextRefreshMs = Math.max(
        lane.nextRefreshMs,
        env.clock.monotonic() + keeper.resendIntervalMs,
      );
    }
    lane.firing.add(owner.projectId);
  }
  const latencies = entries.map((e) => env.births.ageOf(e) / 1000);
  env.observer?.delivered?.(lane.name, alerts, latencies);
}

/** Moves `alerts` of the sink to the project's dead letters; resolves with whether it did. */
async function giveUp(
  owner: OutboxOwner,
  sink: string,
  alerts: readonly Alert[],
  reason: string,
  env: LaneEnv,
  /** What the dead letters keep as the reason, when more than `reason` (a metric label). */
  text: string = reason,
): Promise<boolean> {
  const ids = new Set(alerts.map((a) => a.id));
  const nowMs = env.clock.wall();
  const changed = await owner.updateOutbox(nowMs, (s) =>
    deadLetter(s.outbox, s.deadLetters, sink, ids, text, nowMs),
  );
  env.observer?.deadLettered?.(sink, alerts, reason);
  return changed;
}

/** A firing alert with the names known now that it did not carry yet. */
function named(firing: FiringAlert, names: NameLookup | undefined): FiringAlert {
  const alert = withNames(firing.alert, names);
  return alert === firing.alert ? firing : { ...firing, alert };
}
