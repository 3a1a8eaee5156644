/**
 * The exporter host (`workers/exporter-host.ts`), bundled the way `npm run build` bundles the
 * command (`tools/bundle.ts`), so that its memory and CPU figures are those of the shipped
 * `dist/`, not of some 500 separate modules. Built once per benchmark process, from the
 * compiled files, into `bundle/` at the top of the build directory: the bundle's
 * `src/version.ts` reads the `package.json` that `main.ts` puts one level up.
 */
import { fileURLToPath } from "node:url";
import { build } from "rolldown";
import { bundleOptions } from "../../../tools/bundle.js";
import { workerPath } from "./rpc.js";

const BUNDLE_DIR = fileURLToPath(new URL("../../../bundle/", import.meta.url));

let built: Promise<string> | undefined;

/** The bundled exporter host's path; the first call builds it. */
export function exporterHostBundle(): Promise<string> {
  built ??= build(
    bundleOptions({ "exporter-host": workerPath("workers/exporter-host.js") }, BUNDLE_DIR),
  ).then(() => `${BUNDLE_DIR}exporter-host.js`);
  return built;
}
