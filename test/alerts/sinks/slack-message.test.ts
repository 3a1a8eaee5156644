import { describe, expect, it } from "vitest";
import type { Alert } from "../../../src/store/index.js";
import {
  KIND_STYLE,
  renderSlackMessage,
  SLACK_LIMITS,
  slackAlerts,
  type SlackBlock,
  type SlackMessage,
} from "../../../src/alerts/sinks/index.js";
import {
  escapeAndTruncate,
  formatDuration,
  inlineCode,
  mrkdwnLink,
} from "../../../src/alerts/sinks/mrkdwn.js";
import {
  alertsOfKind,
  incidentProjects,
  makeAlert,
  makeIncidentAlert,
  mixedBatch,
  PROJECT,
} from "./fixtures.js";

function texts(message: SlackMessage): string[] {
  return message.blocks.flatMap((block: SlackBlock) =>
    block.type === "context" ? block.elements.map((e) => e.text) : [block.text.text],
  );
}

function sections(message: SlackMessage): string[] {
  return message.blocks.flatMap((b) => (b.type === "section" ? [b.text.text] : []));
}

/** Slack's limits, checked on any message. */
function expectWithinLimits(message: SlackMessage): void {
  expect(message.blocks.length).toBeLessThanOrEqual(SLACK_LIMITS.maxBlocks);
  for (const block of message.blocks) {
    if (block.type === "header") {
      expect(block.text.type).toBe("plain_text");
      expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.maxHeaderText);
    } else if (block.type === "section") {
      expect(block.text.text.length).toBeLessThanOrEqual(SLACK_LIMITS.maxSectionText);
      expect(block.text.text.length).toBeGreaterThan(0);
    } else {
      expect(block.elements.length).toBeLessThanOrEqual(10);
      for (const e of block.elements) expect(e.text.length).toBeLessThanOrEqual(3000);
    }
  }
  expect(message.text.length).toBeGreaterThan(0);
  expect(message.text.length).toBeLessThanOrEqual(SLACK_LIMITS.maxFallbackText);
}

describe("renderSlackMessage", () => {
  it("renders one item per alert with the kind's emoji, action, status, ids, times and link", () => {
    const batch = mixedBatch();
    const message = renderSlackMessage(batch);
    expectWithinLimits(message);

    const [header, counts] = message.blocks;
    expect(header).toMatchObject({ type: "header", text: { type: "plain_text", emoji: true } });
    // The worst kind present sets the header's emoji.
    expect(header?.type === "header" && header.text.text).toBe(
      `:red_circle: 4 alerts in project ${PROJECT}`,
    );
    expect(counts?.type === "context" && counts.elements[0]?.text).toBe(
      "1 failed · 1 stuck · 1 retrying · 1 recovered",
    );

    const items = sections(message);
    expect(items).toHaveLength(4);
    const [failed, stuck, retrying, recovered] = items as [string, string, string, string];
    expect(failed).toContain(":red_circle: *Operation failed*");
    expect(failed).toContain("`apply_config`");
    expect(failed).toContain("status `failed`");
    expect(failed).toContain("3 failures");
    expect(failed).toContain("branch `br-main-001`");
    expect(failed).toContain("endpoint `ep-primary-001`");
    expect(failed).toContain(`operation \`${batch[0]!.operationId}\``);
    expect(failed).toContain("created 2025-06-01 12:00:00 UTC");
    expect(failed).toContain("updated 2025-06-01 12:05:30 UTC");
    expect(failed).toContain("duration 5m 30s");
    expect(failed).toContain("```compute start failed: could not allocate```");
    expect(failed).toContain(`<${batch[0]!.link!}|Open in console>`);

    expect(stuck).toContain(":hourglass_flowing_sand: *Operation stuck*");
    expect(stuck).toContain("status `running`");
    expect(stuck).toContain("0 failures");
    expect(stuck).toContain("open for 1h 2m");
    expect(stuck).not.toContain("```");

    expect(retrying).toContain(":repeat: *Operation retrying*");
    expect(retrying).toContain("2 failures");

    expect(recovered).toContain(":white_check_mark: *Operation recovered*");
    expect(recovered).toContain("status `finished`");
    // The recovery names the failure it resolves: its id, kind and status.
    expect(recovered).toContain(
      `resolves :red_circle: *Operation failed* alert \`${batch[0]!.id}\` (status \`failed\`, 3 failures)`,
    );
  });

  it("names the resolved alert by id when it is not in the batch", () => {
    const recovered = makeAlert({
      kind: "operation_recovered",
      status: "finished",
      resolves: "abc123",
    });
    const [item] = sections(renderSlackMessage([recovered]));
    expect(item).toContain("resolves alert `abc123`");
    expect(renderSlackMessage([recovered]).text).toContain("resolves abc123");
  });

  it("has a different emoji for every kind, and the header follows the worst kind", () => {
    const emojis = Object.values(KIND_STYLE).map((s) => s.emoji);
    expect(new Set(emojis).size).toBe(Object.keys(KIND_STYLE).length);
    const header = (alerts: Alert[]): string => {
      const block = renderSlackMessage(alerts).blocks[0];
      return block?.type === "header" ? block.text.text : "";
    };
    expect(header(alertsOfKind("operation_recovered", 2))).toMatch(/^:white_check_mark: 2 alerts/);
    expect(
      header([...alertsOfKind("operation_retrying", 1), ...alertsOfKind("operation_stuck", 1)]),
    ).toMatch(/^:hourglass_flowing_sand: /);
    expect(header(alertsOfKind("operation_retrying", 1))).toBe(
      `:repeat: 1 alert in project ${PROJECT}`,
    );
  });

  it("writes a plain fallback text summarising the batch", () => {
    const batch = mixedBatch();
    const { text } = renderSlackMessage(batch);
    const lines = text.split("\n");
    expect(lines[0]).toBe(
      `pgcp-exporter: 4 alerts in project ${PROJECT} (1 failed · 1 stuck · 1 retrying · 1 recovered)`,
    );
    expect(lines).toHaveLength(5);
    expect(lines[1]).toBe("• Operation failed: apply_config (failed) on ep-primary-001");
    expect(lines[4]).toContain(
      `Operation recovered: apply_config (finished) on ep-primary-001, resolves ${batch[0]!.id}`,
    );
    expect(text).not.toMatch(/[*`]/);
  });

  it("shows at most 20 items, then `and N more`, in the blocks and the fallback", () => {
    const batch = alertsOfKind("operation_failed", 50);
    const message = renderSlackMessage(batch);
    expectWithinLimits(message);
    expect(sections(message)).toHaveLength(20);
    expect(sections(message)[19]).toContain(batch[19]!.operationId);
    expect(texts(message).join("\n")).not.toContain(batch[20]!.operationId);
    const last = message.blocks.at(-1);
    expect(last).toEqual({
      type: "context",
      elements: [{ type: "mrkdwn", text: "_and 30 more_" }],
    });
    expect(message.text.split("\n").at(-1)).toBe("and 30 more");
    expect(message.blocks).toHaveLength(23);
  });

  it("shows exactly 20 without `and N more`", () => {
    const message = renderSlackMessage(alertsOfKind("operation_stuck", 20));
    expect(sections(message)).toHaveLength(20);
    expect(texts(message).join("\n")).not.toContain("more");
  });

  it("escapes &, < and > in the error and every other field", () => {
    const alert = makeAlert({
      action: "a<b>&c",
      error: "value <script>alert(1)</script> & <!channel> <@U123>",
      branchId: "br-<x>",
    });
    const [item] = sections(renderSlackMessage([alert]));
    expect(item).toContain("`a&lt;b&gt;&amp;c`");
    expect(item).toContain(
      "value &lt;script&gt;alert(1)&lt;/script&gt; &amp; &lt;!channel&gt; &lt;@U123&gt;",
    );
    expect(item).toContain("branch `br-&lt;x&gt;`");
    expect(item).not.toContain("<!channel>");
    expect(renderSlackMessage([alert]).text).not.toMatch(/<[^h]/);
  });

  it("keeps backticks in the error from closing the code block", () => {
    const [item] = sections(renderSlackMessage([makeAlert({ error: "bad ```value``` `x`" })]));
    expect(item!.match(/```/g)).toHaveLength(2);
  });

  it("truncates long errors and stays within the limits with many long alerts", () => {
    const long = `${"&<>".repeat(2000)}${"x".repeat(10_000)}`;
    const batch = Array.from({ length: 45 }, (_, i) =>
      makeAlert({
        kind: i % 2 === 0 ? "operation_failed" : "operation_recovered",
        error: long,
        action: "a".repeat(500),
        status: "s".repeat(500),
        branchId: "b".repeat(500),
        endpointId: "e".repeat(500),
        operationId: "o".repeat(500),
        link: `https://console.example.test/?q=${"&".repeat(900)}`,
        projectId: `p-${"x".repeat(300)}`,
        resolves: "r".repeat(500),
      }),
    );
    const message = renderSlackMessage(batch);
    expectWithinLimits(message);
    for (const item of sections(message)) {
      expect(item).toContain("…```");
      expect(item).not.toMatch(/&(?!amp;|lt;|gt;)/);
    }
  });

  it("keeps a section under 3000 characters even with a long link", () => {
    const alert = makeAlert({
      error: "e".repeat(5000),
      link: `https://console.example.test/${"p".repeat(960)}`,
    });
    const message = renderSlackMessage([alert]);
    expectWithinLimits(message);
    expect(sections(message)[0]).toContain("|Open in console>");
  });

  it("names every project when a batch mixes them", () => {
    const message = renderSlackMessage([makeAlert(), makeAlert({ projectId: "proj-other" })]);
    const header = message.blocks[0];
    expect(header?.type === "header" && header.text.text).toBe(
      `:red_circle: 2 alerts in 2 projects: ${PROJECT}, proj-other`,
    );
    expect(sections(message)[1]).toContain("project `proj-other`");
  });

  it("shows names beside ids, escaped, and the id alone while a name is unknown", () => {
    const named = makeAlert({
      projectName: "Tenant <Acme>",
      branchName: "preview/pr-812",
      endpointName: "primary\nrw",
    });
    const other = makeAlert({ projectId: "proj-other", branchName: "main" });
    const message = renderSlackMessage([named, other]);
    expectWithinLimits(message);
    const header = message.blocks[0];
    expect(header?.type === "header" && header.text.text).toBe(
      `:red_circle: 2 alerts in 2 projects: Tenant <Acme> (${PROJECT}), proj-other`,
    );
    expect(sections(message)[0]).toContain(
      "project Tenant &lt;Acme&gt; `proj-silent-sun-12345` · branch preview/pr-812 `br-main-001` · endpoint primary rw `ep-primary-001`",
    );
    expect(sections(message)[1]).toContain(
      "project `proj-other` · branch main `br-main-001` · endpoint `ep-primary-001`",
    );
    expect(message.text).toContain("on primary rw (ep-primary-001)");
    const one = renderSlackMessage([named]).blocks[0];
    expect(one?.type === "header" && one.text.text).toBe(
      `:red_circle: 1 alert in project Tenant <Acme> (${PROJECT})`,
    );
  });

  it("refuses an empty batch", () => {
    expect(() => renderSlackMessage([])).toThrow(RangeError);
  });
});

describe("a platform incident in Slack", () => {
  it("opens with the action, region, error, failures and 20 projects, then `and N more`", () => {
    const opened = makeIncidentAlert("opened", { projectCount: 57, failures: 91 });
    const message = renderSlackMessage([opened]);
    expectWithinLimits(message);
    const header = message.blocks[0];
    expect(header?.type === "header" && header.text.text).toBe(
      ":rotating_light: Platform incident: start_compute failing in aws-us-east-2",
    );
    const [item] = sections(message);
    expect(item).toContain(
      ":rotating_light: *Platform incident* · `start_compute` · region `aws-us-east-2` · 57 projects · 91 failures",
    );
    expect(item).toContain("```safekeeper quorum not reached```");
    // The first 20 projects, named where known, then the count of the others.
    const listed = incidentProjects(20).map((p) => p.id);
    expect(item).toContain(`projects: Tenant Acme \`${listed[0]!}\`, \`${listed[1]!}\``);
    for (const id of listed) expect(item).toContain(`\`${id}\``);
    expect(item).not.toContain("proj-020");
    expect(item).toContain(`\`${listed[19]!}\` _and 37 more_`);
    // Not about the project that carries it.
    expect(texts(message).join("\n")).not.toContain(PROJECT);
    expect(texts(message).at(-1)).toBe("incident `inc-7f3a2b`");
    expect(message.text.split("\n")).toEqual([
      "pgcp-exporter: Platform incident: start_compute failing in aws-us-east-2 across 57 projects: safekeeper quorum not reached",
      expect.stringMatching(
        /^projects: Tenant Acme \(proj-000\), proj-001, .*, proj-019 and 37 more$/,
      ),
    ]);
  });

  it("counts no one more when every project is named", () => {
    const [item] = sections(renderSlackMessage([makeIncidentAlert("opened", { projectCount: 3 })]));
    expect(item).toContain("projects: Tenant Acme `proj-000`, `proj-001`, `proj-002`\n");
    expect(item).not.toContain("more");
  });

  it("says in a short message that it is resolved, and how long it lasted", () => {
    const resolved = makeIncidentAlert("resolved", { projectCount: 57, failures: 91 });
    const message = renderSlackMessage([resolved]);
    expectWithinLimits(message);
    const header = message.blocks[0];
    expect(header?.type === "header" && header.text.text).toBe(
      ":white_check_mark: Platform incident resolved: start_compute in aws-us-east-2",
    );
    const [item] = sections(message);
    expect(item).toContain(
      ":white_check_mark: *Platform incident resolved* · `start_compute` · region `aws-us-east-2` · 57 projects · 91 failures",
    );
    expect(item).toContain("lasted 14m 5s");
    expect(item).toContain("```safekeeper quorum not reached```");
    expect(item).not.toContain("proj-0");
    expect(message.text).toBe(
      "pgcp-exporter: Platform incident resolved: start_compute in aws-us-east-2 across 57 projects, lasted 14m 5s (91 failures): safekeeper quorum not reached",
    );
  });

  it("leaves the updates out of what Slack is told", () => {
    const [opened, updated, resolved] = (["opened", "updated", "resolved"] as const).map((s) =>
      makeIncidentAlert(s),
    );
    expect(slackAlerts([updated!])).toEqual([]);
    expect(slackAlerts([opened!, updated!, resolved!])).toEqual([opened, resolved]);
    const failed = makeAlert();
    expect(slackAlerts([failed, updated!])).toEqual([failed]);
  });

  it("is an item among others in a batch that mixes it with operations", () => {
    const failed = makeAlert();
    const opened = makeIncidentAlert("opened", { projectCount: 30 });
    const message = renderSlackMessage([failed, opened]);
    expectWithinLimits(message);
    const header = message.blocks[0];
    expect(header?.type === "header" && header.text.text).toBe(
      `:rotating_light: 2 alerts in project ${PROJECT}`,
    );
    expect(texts(message)[1]).toBe("1 platform-wide · 1 failed");
    expect(sections(message)[1]).toContain("_and 10 more_");
    expect(message.text).toContain(
      "• Platform incident: start_compute failing in aws-us-east-2 across 30 projects: safekeeper quorum not reached",
    );
    const resolvedOnly = renderSlackMessage([
      makeIncidentAlert("resolved", { incidentId: "a" }),
      makeIncidentAlert("resolved", { incidentId: "b" }),
    ]);
    const both = resolvedOnly.blocks[0];
    expect(both?.type === "header" && both.text.text).toBe(":white_check_mark: 2 alerts");
  });

  it("stays within Slack's limits with long names and a long error", () => {
    const alert = makeIncidentAlert("opened", { projectCount: 100 });
    const long = {
      ...alert,
      incident: {
        ...alert.incident!,
        errorClass: "<e>&".repeat(2000),
        projects: alert.incident!.projects.map((p, i) => ({
          id: `${p.id}-${"i".repeat(150)}`,
          name: `n${String(i)}${"<>".repeat(100)}`,
        })),
      },
    };
    const message = renderSlackMessage([long]);
    expectWithinLimits(message);
    const [item] = sections(message);
    const more = /_and (\d+) more_/.exec(item!);
    // Fewer named to fit; the others counted.
    expect(Number(more?.[1])).toBeGreaterThan(80);
    expect(item).toContain("…```");
  });
});

describe("mrkdwn helpers", () => {
  it("escapes before truncating and never splits an entity or a surrogate pair", () => {
    expect(escapeAndTruncate("a&b", 10)).toBe("a&amp;b");
    expect(escapeAndTruncate("&&&&", 10)).toBe("&amp;…");
    expect(escapeAndTruncate("😀😀😀", 4)).toBe("😀…");
  });

  it("renders inline code on one line without backticks", () => {
    expect(inlineCode("a`b\nc", 50)).toBe("`aˋb c`");
    expect(inlineCode("  ", 50)).toBe("—");
  });

  it("links only http(s) URLs and neutralises characters that would end the link", () => {
    expect(mrkdwnLink("javascript:alert(1)", "x", 100)).toBeUndefined();
    expect(mrkdwnLink("https://e.test/a?x=1&y=<2>|z w", "Open", 100)).toBe(
      "<https://e.test/a?x=1&amp;y=%3C2%3E%7Cz%20w|Open>",
    );
    expect(mrkdwnLink(`https://e.test/${"&".repeat(50)}`, "x", 100)).toBeUndefined();
  });

  it("formats durations with two units at most", () => {
    expect(formatDuration(0)).toBe("0s");
    expect(formatDuration(0.4)).toBe("<1s");
    expect(formatDuration(42)).toBe("42s");
    expect(formatDuration(330)).toBe("5m 30s");
    expect(formatDuration(3600)).toBe("1h");
    expect(formatDuration(3725)).toBe("1h 2m");
    expect(formatDuration(2 * 86_400 + 3 * 3600 + 5)).toBe("2d 3h");
  });
});
