/**
 * When the daemon has V8's memory saver mode on: from the start, off at once after a busy
 * second of its event loop, on again after ten quiet seconds in a row; only on a V8 that has the
 * mode (Node 24's 13.6 and later), and never against the operator's own choice. What the mode
 * saves, and what it would cost a catch-up, is measured by `npm run bench`, not asserted here;
 * that the image's runtime takes the flag is checked by CI's production smoke.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  SAVER_POLICY,
  SAVER_START,
  memorySaverSupported,
  nextSaverState,
  startMemorySaver,
  type SaverState,
} from "../../src/exporter/index.js";

function after(utilizations: readonly number[]): SaverState {
  return utilizations.reduce<SaverState>((state, u) => nextSaverState(state, u), SAVER_START);
}

const quiet = 0.1;
const middling = 0.5;
const busy = 0.95;

describe("the memory saver's decision", () => {
  it("saves from the start, while the event loop has time to spare", () => {
    expect(after([]).saving).toBe(true);
    expect(after([quiet, middling, quiet, middling]).saving).toBe(true);
  });

  it("stops saving after one busy second", () => {
    expect(after([quiet, busy]).saving).toBe(false);
    expect(after([SAVER_POLICY.busyFrom]).saving).toBe(false);
  });

  it("saves again only after ten quiet seconds in a row", () => {
    const nine = Array<number>(SAVER_POLICY.quietSeconds - 1).fill(quiet);
    expect(after([busy, ...nine]).saving).toBe(false);
    expect(after([busy, ...nine, quiet]).saving).toBe(true);
    // A second that is neither busy nor quiet starts the count again.
    expect(after([busy, ...nine, middling, ...nine]).saving).toBe(false);
    expect(after([busy, ...nine, middling, ...nine, quiet]).saving).toBe(true);
  });

  it("is on exactly when no second was busy, or ten quiet ones in a row came after the last busy one", () => {
    const second = fc.oneof(
      fc.constant(quiet),
      fc.constant(middling),
      fc.constant(busy),
      fc.double({ min: 0, max: 1, noNaN: true }),
    );
    fc.assert(
      fc.property(fc.array(second, { maxLength: 60 }), (seconds) => {
        const lastBusy = seconds.findLastIndex((u) => u >= SAVER_POLICY.busyFrom);
        let run = 0;
        let quietRun = lastBusy === -1;
        for (const u of seconds.slice(lastBusy + 1)) {
          run = u < SAVER_POLICY.quietBelow ? run + 1 : 0;
          if (run >= SAVER_POLICY.quietSeconds) quietRun = true;
        }
        expect(after(seconds).saving).toBe(quietRun);
      }),
    );
  });
});

describe("which V8 has the mode", () => {
  it("is 13.6 and later (Node 24), not Node 20's or 22's", () => {
    expect(memorySaverSupported("13.6.233.10-node.28")).toBe(true);
    expect(memorySaverSupported("14.2.231.17")).toBe(true);
    expect(memorySaverSupported("13.5.212.10")).toBe(false);
    expect(memorySaverSupported("12.4.254.21-node.33")).toBe(false);
    expect(memorySaverSupported("11.3.244.8-node.25")).toBe(false);
    expect(memorySaverSupported("not a version")).toBe(false);
  });
});

describe("who decides the mode", () => {
  it("is nobody on a V8 without it", () => {
    const saver = startMemorySaver({ v8Version: "12.4.254.21-node.33", execArgv: [] });
    expect(saver.choice).toBe("unsupported");
    saver.stop();
  });

  it("is the operator who started node with the mode, without it, or optimising for size", () => {
    for (const execArgv of [
      ["--memory-saver-mode"],
      ["--no-memory-saver-mode"],
      ["--memory_saver_mode"],
      ["--max-semi-space-size=8", "--optimize-for-size"],
    ]) {
      const saver = startMemorySaver({ v8Version: "13.6.233.10-node.28", execArgv });
      expect(saver.choice, execArgv.join(" ")).toBe("operator");
      saver.stop();
    }
  });
});
