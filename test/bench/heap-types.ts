/**
 * What a V8 heap snapshot holds, by type: `node node_modules/.cache/pgcp-bench/test/bench/
 * heap-types.js FILE.heapsnapshot` (after `npm run bench`, which compiles it; snapshots come
 * from `BENCH_HEAP_SNAPSHOT=<dir>`). Prints the self size and count of each (node type,
 * constructor or kind) pair, largest first, as a Markdown table.
 */
import { readFileSync } from "node:fs";

interface Snapshot {
  readonly snapshot: {
    readonly meta: { readonly node_fields: string[]; readonly node_types: [string[]] };
  };
  readonly nodes: number[];
  readonly strings: string[];
}

const file = process.argv[2];
if (file === undefined) throw new Error("usage: heap-types.js FILE.heapsnapshot [rows]");
const rows = Number(process.argv[3] ?? "20");
const heap = JSON.parse(readFileSync(file, "utf8")) as Snapshot;
const fields = heap.snapshot.meta.node_fields;
const types = heap.snapshot.meta.node_types[0];
const [typeAt, nameAt, sizeAt] = ["type", "name", "self_size"].map((f) => fields.indexOf(f));
const byType = new Map<string, { bytes: number; count: number }>();
let total = 0;
for (let i = 0; i < heap.nodes.length; i += fields.length) {
  const type = types[heap.nodes[i + typeAt!]!] ?? "?";
  // Objects and closures by constructor or function name; strings, code, arrays by kind.
  const named = type === "object" || type === "closure" || type === "native";
  const key = named ? `${type} ${heap.strings[heap.nodes[i + nameAt!]!] ?? "?"}` : type;
  const size = heap.nodes[i + sizeAt!]!;
  const entry = byType.get(key) ?? { bytes: 0, count: 0 };
  entry.bytes += size;
  entry.count += 1;
  byType.set(key, entry);
  total += size;
}
const mib = (bytes: number) => (bytes / 1024 / 1024).toFixed(2);
const lines = [`| type | MiB | share | count |`, `| --- | --- | --- | --- |`];
for (const [key, { bytes, count }] of [...byType]
  .sort((a, b) => b[1].bytes - a[1].bytes)
  .slice(0, rows)) {
  lines.push(
    `| ${key} | ${mib(bytes)} | ${((bytes / total) * 100).toFixed(1)}% | ${count.toLocaleString("en-US")} |`,
  );
}
lines.push(`| all | ${mib(total)} | 100% | |`);
process.stdout.write(`${lines.join("\n")}\n`);
