/**
 * The client reads each answer in a turn of the event loop of its own, so that a burst of
 * answers does not hold the loop at once: turns are handed out one per turn, in the order
 * asked for, and the loop's other work runs between two of them.
 */
import { expect, it } from "vitest";
import { Turns } from "../../src/api/turns.js";

it("hands out one turn per turn of the event loop, in the order they were asked for", async () => {
  let turn = 0;
  let counting = true;
  const count = (): void => {
    turn += 1;
    if (counting) setImmediate(count);
  };
  setImmediate(count);

  const turns = new Turns();
  const seen: { who: number; turn: number }[] = [];
  await Promise.all(
    [1, 2, 3, 4].map(async (who) => {
      await turns.take();
      seen.push({ who, turn });
    }),
  );
  counting = false;

  expect(seen.map((s) => s.who)).toEqual([1, 2, 3, 4]);
  for (let i = 1; i < seen.length; i++) {
    expect(seen[i]?.turn, `take ${i + 1}`).toBeGreaterThan(seen[i - 1]?.turn ?? Infinity);
  }
});

it("lets I/O that is ready run between two turns", async () => {
  const turns = new Turns();
  const order: string[] = [];
  const first = turns.take().then(() => {
    order.push("first");
    // Ready before the next turn: a timer of no delay, run in the timers phase between the two.
    setTimeout(() => order.push("timer"), 0);
    const until = Date.now() + 5;
    while (Date.now() < until); // the timer is due once this turn ends
  });
  const second = turns.take().then(() => order.push("second"));
  await Promise.all([first, second]);
  expect(order).toEqual(["first", "timer", "second"]);
});
