/**
 * `pgcp-exporter check-config` with silences, run as the built command: each silence is
 * printed with whether it is open now (and until when), when it next opens, or that it never
 * will again.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { expect, it } from "vitest";
import { runCli } from "../support/run-cli.js";
import { tempDir } from "../support/temp-dir.js";

it("prints each silence: open until when, when it next opens, or never again", async () => {
  const file = path.join(await tempDir("pgcp-check-silences-"), "config.yaml");
  await writeFile(
    file,
    [
      "projects: [p-1]",
      "silences:",
      "  - name: long-migration",
      "    start: 2020-01-01T00:00:00+01:00",
      "    end: 2999-01-01T00:00:00+01:00",
      "  - name: last-year",
      "    start: 2020-01-01T00:00:00Z",
      "    end: 2020-01-02T00:00:00Z",
      "  - name: far-off",
      "    start: 2998-06-01T22:00:00+02:00",
      "    end: 2998-06-02T00:00:00+02:00",
      "  - name: leap-day",
      "    cron: 30 12 29 2 *",
      "    duration: 1h",
      "    timezone: Europe/Berlin",
      "",
    ].join("\n"),
  );
  const run = await runCli(["check-config", "--config", file], { PGCP_API_KEY: "k" });
  expect(run.stderr).toBe("");
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("  silences:\n");
  expect(run.stdout).toContain(
    "    long-migration: open now, until 2998-12-31T23:00:00.000Z [one-off from 2020-01-01T00:00:00+01:00 to 2999-01-01T00:00:00+01:00]",
  );
  expect(run.stdout).toContain(
    "    last-year: closed, and never opens again [one-off from 2020-01-01T00:00:00Z to 2020-01-02T00:00:00Z]",
  );
  expect(run.stdout).toContain("    far-off: closed, next opens 2998-06-01T20:00:00.000Z [");
  // 12:30 in Berlin on a 29 February (winter time: 11:30Z), whichever leap year comes next.
  expect(run.stdout).toMatch(
    /^ {4}leap-day: closed, next opens \d{4}-02-29T11:30:00\.000Z \(\d{4}-02-29 12:30 Europe\/Berlin\) \[cron "30 12 29 2 \*" for 3600 s in Europe\/Berlin\]/m,
  );
});

it("says when there is none", async () => {
  const run = await runCli(["check-config"], { PGCP_API_KEY: "k", PGCP_PROJECTS: "p-1" });
  expect(run.code).toBe(0);
  expect(run.stdout).toContain("  silences:  none");
});
