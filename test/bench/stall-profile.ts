/**
 * What the exporter was doing in its stalls: `node node_modules/.cache/pgcp-bench/test/bench/
 * stall-profile.js FILE.cpuprofile RESULTS.json [frames]`, for a CPU profile of the scrape
 * scenario's exporter (`BENCH_CPU_PROF=<dir>`) and the results file of the same run. For each
 * stall the run noted that falls inside the profile, prints its length, the collector's part,
 * the wait for a core, and where its samples were: the nearest frame of the project's own code
 * (`src/`), or the sampled function where none is on the stack.
 */
import { readFileSync } from "node:fs";
import type { Stall } from "./workers/exporter-host.js";

interface ProfileNode {
  readonly id: number;
  readonly callFrame: {
    readonly functionName: string;
    readonly url: string;
    readonly lineNumber: number;
  };
  readonly children?: readonly number[];
}

interface Profile {
  readonly nodes: readonly ProfileNode[];
  readonly startTime: number;
  readonly endTime: number;
  readonly samples: readonly number[];
  readonly timeDeltas: readonly number[];
}

interface ScrapeStalls {
  readonly eventLoopDelay: { readonly longestStalls?: readonly Stall[] };
  readonly renderEventLoopDelay: { readonly longestStalls?: readonly Stall[] };
}

const [profileFile, resultsFile] = process.argv.slice(2);
if (profileFile === undefined || resultsFile === undefined) {
  throw new Error("usage: stall-profile.js FILE.cpuprofile RESULTS.json [frames]");
}
const frames = Number(process.argv[4] ?? "4");
const profile = JSON.parse(readFileSync(profileFile, "utf8")) as Profile;
const results = JSON.parse(readFileSync(resultsFile, "utf8")) as {
  readonly scrape?: readonly ScrapeStalls[];
};

const byId = new Map(profile.nodes.map((node) => [node.id, node]));
const parentOf = new Map<number, number>();
for (const node of profile.nodes)
  for (const child of node.children ?? []) parentOf.set(child, node.id);

const label = (node: ProfileNode): string => {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url.replace(/^.*\/(src|node_modules)\//, "$1/");
  return `${functionName === "" ? "(anonymous)" : functionName} ${where}:${lineNumber + 1}`;
};

/** The sample's place: idle, the collector, its nearest own frame, or its own function. */
function placeOf(id: number): string {
  const leaf = byId.get(id);
  if (leaf === undefined) return "?";
  const name = leaf.callFrame.functionName;
  if (name === "(idle)" || name === "(garbage collector)") return name;
  for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
    const node = byId.get(at);
    if (node !== undefined && /\/src\//.test(node.callFrame.url)) return label(node);
  }
  return label(leaf);
}

const times: number[] = [];
let clock = profile.startTime;
for (const delta of profile.timeDeltas) times.push((clock += delta));

const stalls = (results.scrape ?? [])
  .flatMap((point) => [
    ...(point.eventLoopDelay.longestStalls ?? []),
    ...(point.renderEventLoopDelay.longestStalls ?? []),
  ])
  .filter(
    (stall): stall is Stall & { fromUs: number; toUs: number } =>
      stall.fromUs !== undefined &&
      stall.toUs !== undefined &&
      stall.fromUs >= profile.startTime &&
      stall.toUs <= profile.endTime,
  );
if (stalls.length === 0) {
  process.stdout.write("no stall of the results falls inside this profile\n");
}
const overall = new Map<string, number>();
for (const stall of stalls) {
  const places = new Map<string, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    const at = times[i]!;
    if (at < stall.fromUs || at > stall.toUs) continue;
    const ms = ((times[i + 1] ?? stall.toUs) - at) / 1000;
    const place = placeOf(profile.samples[i]!);
    places.set(place, (places.get(place) ?? 0) + ms);
    overall.set(place, (overall.get(place) ?? 0) + ms);
  }
  const top = [...places]
    .sort((a, b) => b[1] - a[1])
    .slice(0, frames)
    .map(([place, ms]) => `${ms.toFixed(1)} ${place}`)
    .join(" | ");
  const waited = stall.waitedMs === undefined ? "?" : stall.waitedMs.toFixed(1);
  process.stdout.write(
    `${stall.ms.toFixed(1)} ms (collecting ${stall.gcMs.toFixed(1)}, waiting ${waited}): ${top}\n`,
  );
}
if (stalls.length > 0) {
  process.stdout.write("over these stalls:\n");
  for (const [place, ms] of [...overall].sort((a, b) => b[1] - a[1]).slice(0, 12)) {
    process.stdout.write(`${ms.toFixed(1).padStart(8)} ${place}\n`);
  }
}
