/**
 * `npm run build`: the command and the container's health check, bundled into `dist/`
 * (`tools/bundle.ts` says how and why).
 */
import { defineConfig } from "rolldown";
import { bundleOptions } from "./bundle.js";

export default defineConfig(
  bundleOptions({ cli: "src/cli.ts", healthcheck: "src/healthcheck.ts" }, "dist"),
);
