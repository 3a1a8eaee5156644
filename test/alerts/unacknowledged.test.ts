/**
 * A delivery the store cannot acknowledge (the state store out of reach right after a sink's
 * 2xx): the alerts stay pending and are delivered again after a backoff, not at the sink's pace,
 * as the same message under the same Idempotency-Key even when the outbox has gained alerts
 * since; once a commit goes through, they are acknowledged and not sent again, and the newer
 * alert goes in a message of its own. The notifier runs in this process with a real webhook sink posting to a local
 * receiver; the project's outbox is held in memory, and its commits fail while the store is
 * "down".
 */
import { afterEach, expect, it } from "vitest";
import { Notifier, createSinks, type OutboxOwner } from "../../src/alerts/index.js";
import { alertsFrom } from "../../src/alerts/rules/rules.js";
import { loadConfig, resolveSinks } from "../../src/config/index.js";
import { createLogger } from "../../src/logger.js";
import {
  STATE_FORMAT,
  STATE_VERSION,
  type OutboxEntry,
  type ProjectState,
} from "../../src/store/index.js";
import { emptyTotals } from "../../src/sync/index.js";
import { startReceiver, type Receiver } from "../support/receiver.js";
import { sleep, waitFor } from "../support/wait.js";
import { FAILED_OPERATION } from "./support/failed-operation.js";

let receiver: Receiver | undefined;
let notifier: Notifier | undefined;
afterEach(async () => {
  await notifier?.stop();
  await receiver?.close();
});

it("backs off from a delivery it cannot acknowledge, and stops once it can", async () => {
  receiver = await startReceiver();
  const env = { HOOK_URL: `${receiver.url}/hook` };
  const config = await loadConfig({
    env,
    overrides: {
      api: { key: "unused" },
      projects: ["p-1"],
      sinks: [{ name: "hook", kind: "webhook", urlEnv: "HOOK_URL", groupWindow: 0 }],
    },
  });
  const failure = (id: string): OutboxEntry => {
    const [alert] = alertsFrom(
      [
        {
          kind: "ended",
          op: { ...FAILED_OPERATION, id },
          status: "failed",
          count: 1,
          durationSeconds: 10,
        },
      ],
      Date.now(),
      { cancelledIsFailure: false, retrying: false, recovered: true, linkTemplate: "" },
    );
    if (alert === undefined) throw new Error("no alert raised");
    return { alert, createdAtMs: Date.now(), pending: ["hook"] };
  };
  const first = failure("0b9e5d4c-1111-4222-8333-944455556666");
  const later = failure("1c8f6e5d-2222-4333-9444-a55566667777");
  let state: ProjectState = {
    format: STATE_FORMAT,
    version: STATE_VERSION,
    projectId: "p-1",
    sequence: 1,
    committedAtMs: Date.now(),
    watermark: { second: 0, ids: [] },
    segment: null,
    tracked: [],
    totals: emptyTotals(),
    outbox: [first],
    deadLetters: [],
  };
  const store = { down: true };
  const owner: OutboxOwner = {
    projectId: "p-1",
    get state() {
      return state;
    },
    updateOutbox: (_nowMs, change) => {
      if (store.down) return Promise.reject(new Error("connect ECONNREFUSED 127.0.0.1:5432"));
      state = { ...state, ...change(state) };
      return Promise.resolve(true);
    },
  };
  notifier = new Notifier({
    sinks: createSinks(resolveSinks(config, env)),
    owner: (id) => (id === "p-1" ? owner : undefined),
    projects: () => [owner],
    logger: createLogger("silent"),
    // The longest jitter: backoffs of 1, 2 and 4 s.
    random: () => 0.999,
  });
  notifier.start();
  notifier.wake("p-1");

  // Three seconds of a store that is down: delivered at 0, about 1 and 3 s, not every 250 ms.
  await receiver.waitFor((r) => r.length >= 1);
  // A newer failure joins the outbox meanwhile (committed by a poll while the store answered).
  state = { ...state, outbox: [first, later] };
  notifier.wake("p-1");
  await sleep(3300);
  const whileDown = receiver.requests.length;
  expect(whileDown).toBeGreaterThanOrEqual(2);
  expect(whileDown).toBeLessThanOrEqual(3);
  const keys = new Set(receiver.requests.map((r) => r.headers["idempotency-key"]));
  expect(keys.size).toBe(1);
  for (const request of receiver.requests) {
    expect(request.text).toContain(first.alert.id);
    expect(request.text).not.toContain(later.alert.id);
  }

  // The store is back: the repeat is acknowledged, the newer alert sent alone, and nothing
  // after them.
  store.down = false;
  await waitFor("both alerts acknowledged", () => state.outbox.length === 0, 10_000);
  const delivered = receiver.requests.length;
  await sleep(1500);
  expect(receiver.requests.length).toBe(delivered);
  const last = receiver.requests.at(-1);
  expect(last?.text).toContain(later.alert.id);
  expect(last?.text).not.toContain(first.alert.id);
  expect(new Set(receiver.requests.map((r) => r.headers["idempotency-key"])).size).toBe(2);
}, 20_000);
