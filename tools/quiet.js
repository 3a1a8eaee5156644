// Runs a command and shows its output only when it fails: `npm test` builds dist/ first, and a
// build that works has nothing to say there.
import { spawnSync } from "node:child_process";
import process from "node:process";

const [command, ...args] = process.argv.slice(2);
if (command === undefined) {
  process.stderr.write("usage: node tools/quiet.js <command> [args…]\n");
  process.exit(2);
}
const run = spawnSync(command, args, { encoding: "utf8", shell: false });
if (run.error !== undefined) {
  process.stderr.write(`${command}: ${run.error.message}\n`);
  process.exit(1);
}
if (run.status !== 0) {
  process.stdout.write(run.stdout);
  process.stderr.write(run.stderr);
}
process.exit(run.status ?? 1);
