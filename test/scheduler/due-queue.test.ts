/**
 * The scheduler's queue of due times hands out the earliest first, whatever the order items
 * were pushed, reset or taken in.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { DueQueue } from "../../src/scheduler/due-queue.js";

describe("the queue of due times", () => {
  it("takes items earliest first through pushes, resets and takes in any order", () => {
    const step = fc.oneof(
      fc.record({ push: fc.integer({ min: 0, max: 1000 }) }),
      fc.record({ pop: fc.constant(true) }),
      fc.record({ reset: fc.array(fc.integer({ min: 0, max: 1000 }), { maxLength: 30 }) }),
    );
    fc.assert(
      fc.property(fc.array(step, { maxLength: 200 }), (steps) => {
        const queue = new DueQueue<number>();
        let model: number[] = [];
        for (const s of steps) {
          if ("push" in s) {
            queue.push(s.push, s.push);
            model.push(s.push);
          } else if ("reset" in s) {
            queue.reset(s.reset.map((at) => ({ item: at, at })));
            model = [...s.reset];
          } else {
            model.sort((a, b) => a - b);
            expect(queue.peek()?.at).toBe(model[0]);
            expect(queue.pop()?.at).toBe(model.shift());
          }
          expect(queue.size).toBe(model.length);
        }
      }),
    );
  });
});
