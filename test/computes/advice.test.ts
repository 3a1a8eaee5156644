/**
 * When a larger compute is advised (src/computes/advice.ts): examples, and a property that
 * checks the rule against its plain statement over random sequences of readings.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  advise,
  type AdviceSample,
  type AdviceSettings,
  type AdviceTrack,
} from "../../src/computes/index.js";

const SETTINGS: AdviceSettings = {
  warmupMs: 300_000,
  windowMs: 600_000,
  hitRatio: 99,
  connectionsShare: 0.9,
};

function sample(over: Partial<AdviceSample>): AdviceSample {
  return {
    atMs: 0,
    start: 1,
    uptimeMs: 3_600_000,
    hitRatio: 99.5,
    connections: 10,
    maxConnections: 112,
    ...over,
  };
}

/** The advice after each of `samples`, in order. */
function run(samples: readonly AdviceSample[], settings = SETTINGS): (readonly string[])[] {
  let track: AdviceTrack | undefined;
  return samples.map((s) => {
    const advice = advise(track, s, settings);
    track = advice.track;
    return advice.advised;
  });
}

describe("the advice, by example", () => {
  it("advises a larger compute once the ratio has stayed below 99% for the window", () => {
    const low = [0, 60_000, 300_000, 599_000, 600_000].map((atMs) =>
      sample({ atMs, hitRatio: 95 }),
    );
    expect(run(low)).toEqual([[], [], [], [], ["file_cache"]]);
  });

  it("starts over when a reading is back above the threshold", () => {
    const samples = [
      sample({ atMs: 0, hitRatio: 95 }),
      sample({ atMs: 500_000, hitRatio: 99.2 }),
      sample({ atMs: 700_000, hitRatio: 95 }),
      sample({ atMs: 1_200_000, hitRatio: 95 }),
      sample({ atMs: 1_300_000, hitRatio: 95 }),
    ];
    expect(run(samples)).toEqual([[], [], [], [], ["file_cache"]]);
  });

  it("does not count the warm-up after a start", () => {
    const cold = [0, 300_000, 600_000].map((atMs) =>
      sample({ atMs, uptimeMs: atMs, hitRatio: 50 }),
    );
    expect(run(cold)).toEqual([[], [], []]);
    // Warm from 300 s: advised 600 s later.
    const on = [...cold, sample({ atMs: 900_000, uptimeMs: 900_000, hitRatio: 50 })];
    expect(run(on).at(-1)).toEqual(["file_cache"]);
  });

  it("starts over on a new start of the compute", () => {
    const samples = [
      sample({ atMs: 0, hitRatio: 90 }),
      sample({ atMs: 500_000, hitRatio: 90, start: 2 }),
      sample({ atMs: 1_000_000, hitRatio: 90, start: 2 }),
      sample({ atMs: 1_100_000, hitRatio: 90, start: 2 }),
    ];
    expect(run(samples)).toEqual([[], [], [], ["file_cache"]]);
  });

  it("advises on connections near max_connections, and not for a size outside the table", () => {
    const busy = [0, 600_000].map((atMs) => sample({ atMs, connections: 101 }));
    expect(run(busy)).toEqual([[], ["connections"]]);
    const unknown = [0, 600_000].map((atMs) =>
      sample({ atMs, connections: 5000, maxConnections: undefined }),
    );
    expect(run(unknown)).toEqual([[], []]);
  });

  it("does not advise on a cache not read from yet", () => {
    const none = [0, 600_000].map((atMs) => sample({ atMs, hitRatio: undefined }));
    expect(run(none)).toEqual([[], []]);
  });

  it("names both reasons when both hold", () => {
    const both = [0, 600_000].map((atMs) => sample({ atMs, hitRatio: 80, connections: 112 }));
    expect(run(both).at(-1)).toEqual(["file_cache", "connections"]);
  });
});

describe("the advice, against its statement", () => {
  const reading = fc.record({
    gapMs: fc.integer({ min: 1_000, max: 400_000 }),
    restart: fc.boolean(),
    hitRatio: fc.option(fc.double({ min: 80, max: 100, noNaN: true }), { nil: undefined }),
    connections: fc.integer({ min: 0, max: 120 }),
  });

  it("advises a reason exactly when every reading of the start past the warm-up, for the window up to now, holds it", () => {
    fc.assert(
      fc.property(fc.array(reading, { minLength: 1, maxLength: 40 }), (steps) => {
        const samples: AdviceSample[] = [];
        let atMs = 0;
        let start = 0;
        let startedMs = 0;
        for (const step of steps) {
          atMs += step.gapMs;
          if (step.restart) {
            start += 1;
            startedMs = atMs - 1_000;
          }
          samples.push({
            atMs,
            start,
            uptimeMs: atMs - startedMs,
            hitRatio: step.hitRatio,
            connections: step.connections,
            maxConnections: 112,
          });
        }
        const got = run(samples);
        samples.forEach((s, i) => {
          const held = (past: (x: AdviceSample) => boolean): boolean => {
            // The run of readings of this start, past the warm-up, that hold, ending here.
            let j = i;
            while (j >= 0) {
              const x = samples[j]!;
              if (x.start !== s.start || x.uptimeMs < SETTINGS.warmupMs || !past(x)) break;
              j -= 1;
            }
            const first = samples[j + 1];
            return j < i && first !== undefined && s.atMs - first.atMs >= SETTINGS.windowMs;
          };
          const expected = [
            ...(held((x) => x.hitRatio !== undefined && x.hitRatio < SETTINGS.hitRatio)
              ? ["file_cache"]
              : []),
            ...(held((x) => x.connections >= SETTINGS.connectionsShare * 112)
              ? ["connections"]
              : []),
          ];
          expect(got[i]).toEqual(expected);
        });
      }),
      { numRuns: 300 },
    );
  });
});
