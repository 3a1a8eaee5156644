/**
 * `pgcp-exporter --version`, as the built command: the package's version and, when known, the
 * git commit it runs from (this checkout's, or the one an image build sets).
 */
import { execFileSync } from "node:child_process";
import { expect, it } from "vitest";
import { PACKAGE } from "../../src/version.js";
import { runCli } from "../support/run-cli.js";

const version = (env: Record<string, string>) => runCli(["--version"], env);

it("prints the version and the revision of the checkout it runs from", async () => {
  const head = execFileSync("git", ["rev-parse", "HEAD"], { encoding: "utf8" }).trim();
  const result = await version({});
  expect(result.code).toBe(0);
  expect(result.stdout).toBe(`pgcp-exporter ${PACKAGE.version} (revision ${head.slice(0, 12)})\n`);
});

it("prints the revision an image build sets, where there is no checkout to read", async () => {
  const result = await version({ PGCP_BUILD_REVISION: "ABCDEF0123456789abcdef0123456789abcdef01" });
  expect(result.stdout).toBe(`pgcp-exporter ${PACKAGE.version} (revision abcdef012345)\n`);
});
