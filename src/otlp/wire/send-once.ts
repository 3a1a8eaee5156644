/**
 * One export of spans for a short-lived command (`wait`): the exporter is built, used once and
 * shut down, and the whole is bounded by the target's timeout, so a collector that is down or
 * never answers delays the command by that much at most. The outcome's detail is cleared of the
 * target's secrets, because a collector may echo a token back in the body of its refusal.
 */
import type { ReadableSpan } from "@opentelemetry/sdk-trace-base";
import type { OtlpTarget } from "../../config/index.js";
import { withoutSecrets } from "../redaction.js";
import { exportOnce, traceExporter, type ExportOutcome } from "./transport.js";

/** Sends `spans` to `target` once; never rejects. */
export async function sendSpansOnce(
  target: OtlpTarget,
  spans: readonly ReadableSpan[],
): Promise<ExportOutcome> {
  const exporter = traceExporter(target);
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<"expired">((resolve) => {
    timer = setTimeout(() => {
      resolve("expired");
    }, target.timeoutMs);
  });
  const outcome = await Promise.race([exportOnce(exporter, [...spans]), expired]);
  clearTimeout(timer);
  if (outcome === "expired") {
    // Shutting down waits for the request still in flight: it is left to its own timeout.
    void exporter.shutdown().catch(() => undefined);
    return {
      ok: false,
      reason: "timeout",
      detail: `no answer within ${target.timeoutMs / 1000} s`,
    };
  }
  await exporter.shutdown().catch(() => undefined);
  return outcome.ok ? outcome : { ...outcome, detail: withoutSecrets(outcome.detail, target) };
}
