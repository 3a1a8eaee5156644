/**
 * At most one message per interval per destination, within this process: each send reserves
 * the next free slot for its key and waits for it. The notifier already keeps `minIntervalMs`
 * between messages to a sink; this also covers two sinks configured with the same URL, and
 * concurrent calls. Keys are hashes, so the map holds no URL.
 */
import { createHash } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { systemClock } from "../../clock.js";

const nextSlotMs = new Map<string, number>();

export function paceKey(kind: string, url: string): string {
  return createHash("sha256").update(`${kind}\n${url}`).digest("hex");
}

/**
 * Reserves the next slot for `key` (at least `intervalMs` after the previous one) and resolves
 * when it comes; resolves `false` when `signal` aborts first (the slot stays taken).
 */
export async function waitForSlot(
  key: string,
  intervalMs: number,
  signal: AbortSignal,
): Promise<boolean> {
  const now = systemClock.monotonic();
  const slot = Math.max(now, nextSlotMs.get(key) ?? now);
  nextSlotMs.set(key, slot + intervalMs);
  const waitMs = slot - now;
  if (waitMs <= 0) return !signal.aborted;
  try {
    await sleep(waitMs, undefined, { signal });
    return true;
  } catch {
    return false;
  }
}
