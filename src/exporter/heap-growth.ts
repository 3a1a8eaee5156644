/**
 * How far V8 lets the daemon's heap grow past what it holds. On a machine with a few GiB of
 * memory, V8 lets a heap grow up to four times its live size before collecting; a daemon that
 * keeps polling never goes idle for V8 to give the pages back, so at 10,000 projects the
 * exporter held 245 MiB of heap for 64 MiB in use (docs/performance.md, memory). A fixed factor
 * of 1.5 keeps it near what it uses, for more frequent collections of a small heap. An operator
 * who passes `--heap-growing-percent` to node keeps their own choice.
 */
import { setFlagsFromString } from "node:v8";

/** The heap may grow by this percentage of its live size before the next full collection. */
export const HEAP_GROWING_PERCENT = 50;

/** Who chose the growing factor: the exporter (and the percentage it set), or node's flags. */
export type HeapGrowth =
  { readonly chosenBy: "exporter"; readonly percent: number } | { readonly chosenBy: "operator" };

/** Whether node's own flags (`process.execArgv`) choose the growing factor. */
export function heapGrowthChosen(execArgv: readonly string[]): boolean {
  return execArgv.some((flag) => /^--heap[-_]growing[-_]percent(=|$)/.test(flag));
}

/** Sets V8's heap growing factor for this process, unless node's flags already choose it. */
export function limitHeapGrowth(execArgv: readonly string[] = process.execArgv): HeapGrowth {
  if (heapGrowthChosen(execArgv)) return { chosenBy: "operator" };
  // V8 reads it at each full collection, so setting it once the process runs takes effect.
  setFlagsFromString(`--heap-growing-percent=${String(HEAP_GROWING_PERCENT)}`);
  return { chosenBy: "exporter", percent: HEAP_GROWING_PERCENT };
}
