/**
 * `silences:` as an operator writes them: a one-off or a recurring window, never half of each,
 * and every wrong combination named by its path.
 */
import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../../src/config/index.js";
import { tempDir } from "../support/temp-dir.js";
import { writeFile } from "node:fs/promises";
import path from "node:path";

async function load(silences: string, sinks = ""): Promise<Awaited<ReturnType<typeof loadConfig>>> {
  const file = path.join(await tempDir("pgcp-silences-"), "config.yaml");
  await writeFile(file, `projects: [p-1]\n${sinks}silences:\n${silences}`);
  return loadConfig({ file, env: { PGCP_API_KEY: "k" } });
}

async function problems(silences: string, sinks = ""): Promise<readonly string[]> {
  const error = await load(silences, sinks).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ConfigError);
  // Each problem ends with where it came from: the file.
  return (error as ConfigError).problems.map((p) => p.replace(/ \(from the file .*\)$/, ""));
}

describe("silences", () => {
  it("reads a one-off window with its offset, and a recurring one in its time zone", async () => {
    const config = await load(
      [
        "  - name: migration",
        "    comment: moving the fleet",
        "    projects: [p-1]",
        "    kinds: [operation_failed]",
        "    start: 2025-06-01T22:00:00+02:00",
        "    end: 2025-06-02T02:00:00+02:00",
        "  - name: nightly",
        "    cron: 0 22 * * mon-fri",
        "    duration: 2h",
        "    timezone: Europe/Berlin",
        "    sinks: [slack]",
        "  - name: weekly",
        "    cron: 0 3 * * 0",
        "    duration: 30m",
        "",
      ].join("\n"),
    );
    expect(config.silences).toEqual([
      {
        name: "migration",
        comment: "moving the fleet",
        match: {
          projects: ["p-1"],
          kinds: ["operation_failed"],
          actions: undefined,
          statuses: undefined,
        },
        sinks: undefined,
        window: {
          kind: "one_off",
          start: "2025-06-01T22:00:00+02:00",
          end: "2025-06-02T02:00:00+02:00",
          startMs: Date.parse("2025-06-01T20:00:00Z"),
          endMs: Date.parse("2025-06-02T00:00:00Z"),
        },
      },
      expect.objectContaining({
        name: "nightly",
        sinks: ["slack"],
        window: expect.objectContaining({
          kind: "recurring",
          cron: "0 22 * * mon-fri",
          durationSeconds: 7200,
          timeZone: "Europe/Berlin",
        }) as unknown,
      }),
      expect.objectContaining({
        window: expect.objectContaining({ timeZone: "UTC", durationSeconds: 1800 }) as unknown,
      }),
    ]);
  });

  it("names each wrong combination by its path", async () => {
    const found = await problems(
      [
        "  - name: both",
        "    start: 2025-06-01T22:00:00Z",
        "    end: 2025-06-01T23:00:00Z",
        "    cron: 0 22 * * *",
        "  - name: neither",
        "    projects: [p-1]",
        "  - name: no-end",
        "    start: 2025-06-01T22:00:00Z",
        "  - name: backwards",
        "    start: 2025-06-01T22:00:00Z",
        "    end: 2025-06-01T21:00:00Z",
        "  - name: no-offset",
        "    start: 2025-06-01T22:00:00",
        "    end: 2025-02-30T22:00:00Z",
        "  - name: no-duration",
        "    cron: 0 22 * * *",
        "  - name: zoned-one-off",
        "    start: 2025-06-01T22:00:00Z",
        "    end: 2025-06-01T23:00:00Z",
        "    timezone: Europe/Berlin",
        "  - name: bad-cron",
        "    cron: 0 25 * * *",
        "    duration: 1h",
        "    timezone: Mars/Olympus",
        "  - name: Bad Name",
        "    cron: 0 1 * * *",
        "    duration: 1h",
        "  - name: nightly",
        "    cron: 0 1 * * *",
        "    duration: 1h",
        "    sinks: [pager]",
        "  - name: nightly",
        "    cron: 0 1 * * *",
        "    duration: 1h",
        "    when: always",
        "",
      ].join("\n"),
    );
    expect(found).toEqual(
      expect.arrayContaining([
        "silences[0]: has both a one-off window (start, end) and a recurring one (cron, duration, timezone): keep one",
        "silences[1]: needs a window: start and end (a one-off), or cron and duration (recurring)",
        "silences[2].end: is required with start (a one-off window)",
        "silences[3].end: must be after start (2025-06-01T22:00:00Z)",
        'silences[4].start: not an RFC 3339 date-time with an offset (e.g. 2025-06-01T22:00:00+02:00 or …Z): "2025-06-01T22:00:00"',
        'silences[4].end: not an RFC 3339 date-time with an offset (e.g. 2025-06-01T22:00:00+02:00 or …Z): "2025-02-30T22:00:00Z"',
        "silences[5].duration: is required with cron: how long the window stays open (e.g. 2h)",
        "silences[6].timezone: applies only to a recurring window (start and end carry their offsets)",
        expect.stringMatching(/^silences\[7\]\.cron: the hour field "25" is not valid/) as string,
        "silences[7].timezone: not a known IANA time zone name (e.g. Europe/Berlin): Mars/Olympus",
        "silences[8].name: must be lowercase letters, digits, - or _",
        expect.stringMatching(/^silences\[10\]\.when: unknown setting/) as string,
      ]),
    );
  });

  it("refuses a silence of a sink that is not configured, and repeated names", async () => {
    const sinks = "sinks:\n  - name: slack\n    kind: slack\n";
    const found = await problems(
      [
        "  - name: nightly",
        "    cron: 0 1 * * *",
        "    duration: 1h",
        "    sinks: [slack, pager]",
        "  - name: nightly",
        "    start: 2025-06-01T22:00:00Z",
        "    end: 2025-06-01T23:00:00Z",
        "",
      ].join("\n"),
      sinks,
    );
    expect(found).toContain("silences[0].sinks[1]: no sink is named pager (sinks: slack)");
    expect(found).toContain("silences[1].name: repeats nightly");
  });
});
