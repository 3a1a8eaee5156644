/**
 * PromQL parsing through promtool: `promtool` has no command that parses a bare expression, but
 * `promtool check rules` parses the expression of every rule of a rules file. So expressions
 * become recording rules of a temporary file.
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import path from "node:path";
import { stringify } from "yaml";

export interface PromtoolRun {
  readonly status: number | null;
  readonly output: string;
}

export function runPromtool(promtool: string, args: readonly string[]): PromtoolRun {
  const run = spawnSync(promtool, args, { encoding: "utf8", timeout: 20_000 });
  if (run.error !== undefined) throw run.error;
  return { status: run.status, output: `${run.stdout}${run.stderr}` };
}

/**
 * Writes `expressions` as recording rules (named `pgcp_check:<n>`) into `dir` and runs
 * `promtool check rules` on them.
 */
export function checkExpressions(
  promtool: string,
  dir: string,
  expressions: readonly string[],
): PromtoolRun {
  const file = path.join(dir, "expressions.rules.yml");
  const rules = expressions.map((expr, i) => ({ record: `pgcp_check:expr_${i}`, expr }));
  writeFileSync(file, stringify({ groups: [{ name: "expressions", rules }] }));
  return runPromtool(promtool, ["check", "rules", file]);
}
