/**
 * What a long test has to say about its run (its seed, the moments of its kills, timings):
 * printed only when the test fails, beside the failure, so that a passing suite prints nothing.
 */
import { onTestFailed } from "vitest";

/**
 * Called in the running test: returns `note`, which keeps a line (several, joined with
 * newlines) for the test's failure output.
 */
export function failureNotes(): (text: string) => void {
  const lines: string[] = [];
  onTestFailed(() => {
    if (lines.length > 0) console.log(lines.join("\n"));
  });
  return (text) => {
    lines.push(text);
  };
}
