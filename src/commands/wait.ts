/**
 * `pgcp-exporter wait`: waits for a project's control-plane operations to end, for CI jobs that
 * must not send a dependent request too early (seed 4.2). The flags are read by `wait-flags.ts`,
 * the settings by `wait-settings.ts`, the decisions are the API client's
 * (`api/operation-watch.ts`), what is printed and the exit status are `wait-report.ts`'s, the
 * spans sent under the CI job's trace `wait-trace.ts`'s; this is the edge that reads the API and
 * writes the output.
 */
import { ConfigError, displayUrl, resolveAccounts } from "../config/index.js";
import {
  isNotFound,
  rootAnswersNotFound,
  waitVerdict,
  type ApiClient,
  type WaitResult,
} from "../api/index.js";
import type { Operation } from "../contract/index.js";
import { apiClientFor } from "../exporter/index.js";
import { nudgeExporter } from "./exporter-nudge.js";
import type { Command } from "./command.js";
import { usageProblems } from "./usage.js";
import { WAIT_HELP, parseWaitArgs, type WaitRequest } from "./wait-flags.js";
import {
  EXIT,
  apiFailure,
  exitCodeOf,
  jsonReport,
  statusLine,
  summaryLines,
  traceIdsReport,
} from "./wait-report.js";
import { loadWaitSettings, type WaitSettings } from "./wait-settings.js";
import { planTracing, readTraceContext, sendWaitSpans, type TracePlan } from "./wait-trace.js";
import { systemClock } from "../clock.js";

export const waitCommand: Command = {
  async run(argv) {
    const args = parseWaitArgs(argv);
    if (args.kind === "help") {
      process.stdout.write(WAIT_HELP + "\n");
      return 0;
    }
    if (args.kind === "usage_error") {
      process.stderr.write(usageProblems("wait", args.problems));
      return EXIT.usage;
    }
    if (args.kind === "print_trace_ids") {
      process.stdout.write(traceIdsReport(args.request.operationId, args.request.attempt) + "\n");
      return 0;
    }
    const { request } = args;
    let settings: WaitSettings;
    try {
      settings = await loadWaitSettings(request.projectId, process.env);
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`pgcp-exporter wait: ${error.message}\n`);
      return EXIT.usage;
    }
    const { config } = settings;
    const tracing = planTracing(settings, readTraceContext(request.traceParent, process.env));
    for (const note of tracing.notes) process.stderr.write(`pgcp-exporter wait: ${note}\n`);
    // The single-key settings: PGCP_API_KEY and PGCP_API_URL, as for `run`.
    const [account] = resolveAccounts(config, process.env);
    if (account === undefined) throw new Error("the single-key settings make one account");
    const client = apiClientFor(account, config.api);
    const nudge = async () => {
      if (request.exporterUrl === undefined) return;
      const problem = await nudgeExporter(request.exporterUrl, request.projectId);
      if (problem !== undefined) process.stderr.write(`pgcp-exporter wait: warning: ${problem}\n`);
    };
    try {
      // The exporter follows the operations from their start, and sees their end at once.
      await nudge();
      const code = await waitFor(client, request, tracing);
      await nudge();
      return code;
    } catch (error) {
      // A 404 from a base URL that is not the API's (no /api/v2) names the URL, not --project.
      const rootNotFound = isNotFound(error) && (await rootAnswersNotFound(client));
      const { code, reason } = apiFailure(error, displayUrl(config.api.url), rootNotFound);
      process.stderr.write(`pgcp-exporter wait: ${reason}\n`);
      return code;
    } finally {
      await client.close();
    }
  },
};

async function waitFor(
  client: ApiClient,
  request: WaitRequest,
  tracing: TracePlan,
): Promise<number> {
  const { projectId, target } = request;
  const text = request.output === "text";
  const out = (line: string) => process.stdout.write(line + "\n");
  const initial: readonly Operation[] =
    target.kind === "open"
      ? await client.openOperations(projectId, target)
      : await client.readOperations(projectId, target.operationIds);
  if (text && target.kind === "open") {
    out(`${initial.length} open operation${initial.length === 1 ? "" : "s"} in ${projectId}`);
  }
  // Ctrl-C (or a CI runner's SIGTERM) ends the wait with the summary of where things stand.
  const stop = new AbortController();
  const interrupt = () => {
    stop.abort(new Error("interrupted"));
  };
  process.once("SIGINT", interrupt);
  process.once("SIGTERM", interrupt);
  let result: WaitResult;
  try {
    result = await client.waitForOperations(projectId, initial, {
      intervalMs: request.intervalMs,
      timeoutMs: request.timeoutMs,
      retryGraceMs: request.retryGraceMs,
      signal: stop.signal,
      ...(text ? { onStatus: (change) => out(statusLine(change, systemClock.wall())) } : {}),
    });
  } finally {
    process.off("SIGINT", interrupt);
    process.off("SIGTERM", interrupt);
  }
  const verdict = waitVerdict(result);
  if (text) for (const line of summaryLines(result, verdict, request.timeoutMs)) out(line);
  else out(jsonReport(projectId, result, verdict, tracing.parent));
  // After the report, so that the outcome is out at once; the send is bounded by its timeout.
  const operations = [...result.succeeded, ...result.failed, ...result.pending];
  const warning = await sendWaitSpans(tracing, operations);
  if (warning !== undefined) process.stderr.write(`pgcp-exporter wait: ${warning}\n`);
  return exitCodeOf(verdict);
}
