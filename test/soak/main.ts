/**
 * Entry point of `npm run soak`, compiled with the sources into
 * `node_modules/.cache/pgcp-bench` (out of the way of the linters). The compiled
 * `src/version.js` reads `../package.json`: a copy is put beside the build before anything
 * imports it.
 */
import { copyFileSync } from "node:fs";
import { fileURLToPath } from "node:url";

const build = fileURLToPath(new URL("../../", import.meta.url));
const repository = fileURLToPath(new URL("../../../../../", import.meta.url));
copyFileSync(`${repository}package.json`, `${build}package.json`);
// `--replicas` (or SOAK_MODE=replicas): the replica soak on PostgreSQL; otherwise the fault soak.
if (process.argv.includes("--replicas") || process.env.SOAK_MODE === "replicas") {
  await import("./replicas.js");
} else {
  await import("./soak.js");
}
