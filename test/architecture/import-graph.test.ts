/**
 * The layers of `src/` hold: a part imports only itself and the parts below it, so that data
 * flows one way (api → sync → store → metrics, alerts, status) and a part can be read without
 * the ones above it. The test reads every import of every module under `src/` (static, dynamic
 * and `export … from`), resolves it to the part it lands in, and lists each upward or sideways
 * import with its file and line. The simulator shares nothing with the exporter but the API's
 * schemas (`contract/`). Within a part with rooms (`metrics/`, `alerts/`, `status/`), the rooms
 * keep an order too.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";

const SRC = fileURLToPath(new URL("../../src/", import.meta.url));

/**
 * The parts, lowest first. A part is a folder of `src/`, or a module at its root. A part may
 * import the parts of every earlier line, never those of its own line or a later one.
 */
const LAYERS: readonly (readonly string[])[] = [
  ["clock.ts", "logger.ts", "version.ts"],
  ["contract"],
  ["store"],
  ["config"],
  ["api", "sync", "scheduler", "leases"],
  ["alerts", "otlp"],
  ["metrics", "status", "computes"],
  ["server"],
  ["daemon"],
  ["exporter"],
  ["simulator"],
  ["commands"],
  ["cli.ts", "healthcheck.ts"],
];

/** Parts that may import fewer parts than their layer allows. */
const ONLY: Readonly<Record<string, readonly string[]>> = {
  simulator: ["contract"],
};

/**
 * The rooms (folders) of a part, lowest first: a module in a room imports only its own room and
 * the rooms of earlier lines. The part's modules outside its rooms (its assembly, `index.ts`)
 * may import every room, and no room imports them.
 */
const ROOMS: Readonly<Record<string, readonly (readonly string[])[]>> = {
  metrics: [["definitions"], ["events"], ["rendering"]],
  alerts: [["rules", "sinks"], ["pipeline"]],
  status: [["shared"], ["accounts", "alerts", "incidents", "replica"], ["projects"]],
};

function modules(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return modules(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** The part a module of `src/` belongs to. */
function partOf(file: string): string {
  return path.relative(SRC, file).split(path.sep)[0] ?? "";
}

/** The room of a module within its part: its folder there, or "" at the part's top. */
function roomOf(file: string): string {
  const segments = path.relative(SRC, file).split(path.sep);
  return segments.length > 2 ? (segments[1] ?? "") : "";
}

interface Import {
  readonly from: string;
  readonly line: number;
  readonly target: string;
}

/** Every relative import of a module: `import … from`, `export … from`, `import(…)`. */
function importsOf(file: string): Import[] {
  const text = readFileSync(file, "utf8");
  const found: Import[] = [];
  const pattern = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+)["']/g;
  for (const match of text.matchAll(pattern)) {
    const specifier = match[1] ?? "";
    const target = path.resolve(path.dirname(file), specifier.replace(/\.js$/, ".ts"));
    const line = text.slice(0, match.index).split("\n").length;
    found.push({ from: file, line, target });
  }
  return found;
}

const rank = new Map(LAYERS.flatMap((parts, i) => parts.map((part) => [part, i] as const)));

it("knows every part of src/", () => {
  const parts = new Set(modules(SRC).map(partOf));
  expect([...parts].filter((part) => !rank.has(part)).sort()).toEqual([]);
});

it("has no import of a part from the same layer or above", () => {
  const violations: string[] = [];
  for (const file of modules(SRC)) {
    const from = partOf(file);
    for (const { line, target } of importsOf(file)) {
      if (!target.startsWith(SRC)) {
        violations.push(`${path.relative(SRC, file)}:${line} imports ${target}, outside src/`);
        continue;
      }
      const to = partOf(target);
      if (to === from) continue;
      const allowed =
        ONLY[from] !== undefined
          ? ONLY[from].includes(to)
          : (rank.get(to) ?? Infinity) < (rank.get(from) ?? -Infinity);
      if (!allowed) violations.push(`${path.relative(SRC, file)}:${line} (${from}) imports ${to}`);
    }
  }
  expect(violations).toEqual([]);
});

it("has no import of a room from the same line or above, nor of its part's top", () => {
  const violations: string[] = [];
  for (const file of modules(SRC)) {
    const part = partOf(file);
    const rooms = ROOMS[part];
    if (rooms === undefined) continue;
    const roomRank = new Map(rooms.flatMap((names, i) => names.map((room) => [room, i] as const)));
    const from = roomOf(file);
    if (from !== "" && !roomRank.has(from)) {
      violations.push(`${path.relative(SRC, file)} is in ${part}/${from}, a room not listed`);
    }
    for (const { line, target } of importsOf(file)) {
      const to = roomOf(target);
      if (partOf(target) !== part || from === "" || to === from) continue;
      const allowed = to !== "" && (roomRank.get(to) ?? Infinity) < (roomRank.get(from) ?? 0);
      const where = to === "" ? "the top" : to;
      if (!allowed)
        violations.push(`${path.relative(SRC, file)}:${line} (${from}) imports ${where}`);
    }
  }
  expect(violations).toEqual([]);
});

it("reads imports the way the modules write them", () => {
  // The reader itself: a known upward import would be found.
  const sample = importsOf(path.join(SRC, "exporter", "start-exporter.ts")).map((i) =>
    partOf(i.target),
  );
  expect(sample).toContain("daemon");
  expect(sample).toContain("config");
});
