/**
 * The memory baseline of a budget run: a process that makes the requests the exporter made, at
 * the same rates, with undici, parses each answer with `JSON.parse`, and does nothing else. It
 * loads none of the exporter's modules. Started with the exporter's node flags and environment,
 * its peak RSS is what the runtime itself costs for that traffic, so that the exporter's figure
 * can be read against it on any runtime.
 */
import { apiReader } from "../lib/api-reader.js";
import { serve } from "../lib/rpc.js";
import { memorySnapshot, type MemorySnapshot } from "../lib/process-stats.js";

export interface PollerArgs {
  readonly apiUrl: string;
  readonly apiKey: string;
  readonly projectIds: readonly string[];
  /** Reads of a project's first page of operations per second, in turn over the projects. */
  readonly pollsPerSecond: number;
  /** Listings of a project's endpoints per second, in turn over the projects. */
  readonly listingsPerSecond: number;
  /** The limit of each first page (the exporter's `poll.firstPageLimit`). */
  readonly firstPageLimit: number;
  /** Connections to the API (the exporter's `api.concurrency`). */
  readonly concurrency: number;
  readonly seconds: number;
}

export interface PollerResult {
  readonly requests: number;
  readonly memory: MemorySnapshot;
}

/** How often the poller looks at what is due (ms). */
const TICK_MS = 20;

const handlers = {
  async poll(args: PollerArgs): Promise<PollerResult> {
    if (args.projectIds.length === 0) throw new Error("no projects to poll");
    const api = apiReader(args.apiUrl, args.apiKey, args.concurrency);
    const project = (n: number) =>
      encodeURIComponent(args.projectIds[n % args.projectIds.length] ?? "");
    let polls = 0;
    let listings = 0;
    const inFlight = new Set<Promise<void>>();
    let failure: Error | undefined;
    const send = (path: string): void => {
      const request = api.get(path).then(
        () => undefined,
        (error: unknown) => {
          failure ??= error instanceof Error ? error : new Error(String(error));
        },
      );
      inFlight.add(request);
      void request.finally(() => inFlight.delete(request));
    };
    const started = performance.now();
    for (;;) {
      const elapsed = Math.min((performance.now() - started) / 1000, args.seconds);
      for (; polls < Math.floor(elapsed * args.pollsPerSecond); polls += 1) {
        send(`/projects/${project(polls)}/operations?limit=${args.firstPageLimit}`);
      }
      for (; listings < Math.floor(elapsed * args.listingsPerSecond); listings += 1) {
        send(`/projects/${project(listings)}/endpoints`);
      }
      if (failure !== undefined || elapsed >= args.seconds) break;
      await new Promise((resolve) => setTimeout(resolve, TICK_MS));
    }
    await Promise.all(inFlight);
    await api.close();
    if (failure !== undefined) throw failure;
    return { requests: polls + listings, memory: memorySnapshot() };
  },
};

export type PollerBaseline = typeof handlers;

serve(handlers);
