/**
 * Platform incidents on the status page: each open incident (carried by some watched project's
 * committed state, shown once) as a banner at the top with its action, region, escaped error
 * class, times, failures and first projects named; the oldest first, capped; whatever the
 * filter; at `summary` (served over HTTP) only how many are open.
 */
import { afterEach, describe, expect, it } from "vitest";
import type { RunningServer } from "../../src/server/index.js";
import { createStatusPage, renderStatusPage } from "../../src/status/index.js";
import type { CarriedIncident } from "../../src/store/index.js";
import { NOW, projectInfo, StatusFixture, state, serveStatusPage, viewOf } from "./support.js";

function incident(over: Partial<CarriedIncident> & { id: string }): CarriedIncident {
  return {
    action: "start_compute",
    regionId: "aws-us-east-2",
    errorClass: "compute <id> did not start within <n> s",
    firstAtMs: NOW - 720_000,
    lastAtMs: NOW - 60_000,
    failures: 7,
    projects: ["p-1", "p-2"],
    projectCount: 2,
    ...over,
  };
}

/** A committed state carrying these incidents. */
function carrying(projectId: string, carried: CarriedIncident[]) {
  return state(projectId, { incidents: { marks: [], carried, resolved: [] } });
}

/** The banners in the page's order, by incident id. */
function banners(html: string): string[] {
  return [...html.matchAll(/<div class="banner incident" data-incident="([^"]*)"/g)].map(
    (m) => m[1]!,
  );
}

function banner(html: string, id: string): string {
  return (
    new RegExp(`<div class="banner incident" data-incident="${id}">[\\s\\S]*?</div>`).exec(
      html,
    )?.[0] ?? ""
  );
}

describe("platform incidents on the status page", () => {
  it("shows a carried incident at the top: action, region, error, times, names beside ids", () => {
    const members = Array.from({ length: 25 }, (_, i) => `p-${i + 1}`);
    const status = new StatusFixture({ now: () => NOW })
      .set("p-1", carrying("p-1", [incident({ id: "inc-1", projects: members, projectCount: 30 })]))
      .set("p-2", state("p-2"));
    status.reports.projectDescribed("p-1", projectInfo({ name: "Acme Billing" }));
    status.reports.projectDescribed("p-2", projectInfo({ name: "Globex Lab" }));
    const view = viewOf(status);
    expect(view.incidentsOpen).toBe(1);
    expect(view.incidents).toHaveLength(1);
    expect(view.incidents[0]).toMatchObject({
      id: "inc-1",
      action: "start_compute",
      regionId: "aws-us-east-2",
      failures: 7,
      projectCount: 30,
    });
    expect(view.incidents[0]?.projects.slice(0, 3)).toEqual([
      { id: "p-1", name: "Acme Billing" },
      { id: "p-2", name: "Globex Lab" },
      { id: "p-3", name: undefined },
    ]);
    expect(view.incidents[0]?.projects).toHaveLength(20);

    const html = renderStatusPage(view);
    // Above the filter and the summary.
    const section = html.indexOf('<section id="incidents">');
    expect(section).toBeGreaterThan(html.indexOf("<main>"));
    expect(section).toBeLessThan(html.indexOf('<section id="summary">'));
    expect(banners(html)).toEqual(["inc-1"]);
    const b = banner(html, "inc-1");
    expect(b).toContain('<span class="action">start_compute</span>');
    expect(b).toContain('<span class="region">aws-us-east-2</span>');
    expect(b).toContain("across 30 projects, 7 failures since");
    expect(b).toContain("(12 min ago)");
    expect(b).toContain("the latest at <time");
    expect(b).toContain("(1 min ago)");
    expect(b).toContain(
      '<span class="error error-class">compute &lt;id&gt; did not start within &lt;n&gt; s</span>',
    );
    expect(b).toContain(
      '<span class="project-name">Acme Billing</span> <code class="project-id">p-1</code>, <span class="project-name">Globex Lab</span> <code class="project-id">p-2</code>, <code class="project-id">p-3</code>',
    );
    // The first 20 listed, the other 10 of the 30 counted.
    expect(b).toContain(
      '<code class="project-id">p-20</code> <span class="muted">and 10 more</span>',
    );
    expect(b).not.toContain("p-21");
  });

  it("shows an incident carried by two projects once, as its latest record says", () => {
    const older = incident({ id: "inc-1", lastAtMs: NOW - 300_000, failures: 5 });
    const newer = incident({ id: "inc-1", lastAtMs: NOW - 60_000, failures: 9 });
    const status = new StatusFixture({ now: () => NOW })
      .set("p-1", carrying("p-1", [older]))
      .set("p-2", carrying("p-2", [newer]))
      .set("p-3", carrying("p-3", [older]));
    const view = viewOf(status);
    expect(view.incidentsOpen).toBe(1);
    expect(view.incidents.map((i) => [i.id, i.failures, i.lastAtMs])).toEqual([
      ["inc-1", 9, NOW - 60_000],
    ]);
    const html = renderStatusPage(view);
    expect(banners(html)).toEqual(["inc-1"]);
    expect(html).toContain("9 failures since");
  });

  it("shows the oldest incidents first, at most the limit, and counts the rest", () => {
    const status = new StatusFixture({ now: () => NOW });
    // Eight incidents, two per project, in no order: inc-0 is the oldest.
    const order = [5, 2, 7, 0, 3, 6, 1, 4];
    for (let p = 0; p < 4; p++) {
      const carried = order
        .slice(p * 2, p * 2 + 2)
        .map((n) => incident({ id: `inc-${n}`, firstAtMs: NOW - 1_000_000 + n * 1000 }));
      status.set(`p-${p}`, carrying(`p-${p}`, carried));
    }
    const view = viewOf(status, { limits: { incidentsShown: 3 } });
    expect(view.incidentsOpen).toBe(8);
    expect(view.incidents.map((i) => i.id)).toEqual(["inc-0", "inc-1", "inc-2"]);
    const html = renderStatusPage(view);
    expect(banners(html)).toEqual(["inc-0", "inc-1", "inc-2"]);
    expect(html).toMatch(/<p class="note" id="incidents-more">and 5 more open;/);
  });

  it("shows every incident whatever the account or organisation filter", () => {
    const status = new StatusFixture({ now: () => NOW })
      .set("p-1", carrying("p-1", [incident({ id: "inc-1" })]))
      .set("p-2", state("p-2"));
    status.reports.projectDescribed("p-1", projectInfo({ name: "Acme", account: "people" }));
    status.reports.projectDescribed(
      "p-2",
      projectInfo({ name: "Globex", orgId: "org-globex-5678" }),
    );
    const view = viewOf(status, { filter: { orgId: "org-globex-5678" } });
    expect(view.projects.map((p) => p.projectId)).toEqual(["p-2"]);
    expect(view.incidents.map((i) => i.id)).toEqual(["inc-1"]);
    expect(banners(renderStatusPage(view))).toEqual(["inc-1"]);
  });

  it("has no incidents section while none is open", () => {
    const status = new StatusFixture({ now: () => NOW })
      .set("p-1", state("p-1"))
      .set("p-2", state("p-2", { incidents: { marks: [], carried: [], resolved: [] } }))
      .set("p-3", undefined);
    const view = viewOf(status);
    expect([view.incidents, view.incidentsOpen]).toEqual([[], 0]);
    for (const detail of ["full", "summary"] as const) {
      const html = renderStatusPage(view, detail);
      expect(html).not.toContain('id="incidents"');
      expect(html).not.toContain('id="incident-count"');
      expect(html).not.toContain("data-incident");
      expect(html).not.toContain("Platform incident");
    }
  });

  it("shows an error class from outside as text, cleaned as other outside texts", () => {
    const evil = `<script>alert("x")</script> & <img src=x onerror=alert(1)> 'q' \u0007`;
    const status = new StatusFixture({ now: () => NOW }).set(
      "p-1",
      carrying("p-1", [
        incident({
          id: `inc-"><b>`,
          action: "<i>start</i>",
          regionId: "<u>r</u>",
          errorClass: evil,
        }),
      ]),
    );
    const view = viewOf(status, { redact: (text) => text.replace("onerror", "[redacted]") });
    expect(view.incidents[0]?.errorClass).toBe(
      `<script>alert("x")</script> & <img src=x [redacted]=alert(1)> 'q' \ufffd`,
    );
    const html = renderStatusPage(view);
    expect(html.toLowerCase()).not.toMatch(/<script/);
    expect(html).not.toContain("<img");
    expect(html).not.toContain("<i>start");
    expect(html).not.toContain("<u>r");
    expect(html).toContain(
      "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &lt;img src=x [redacted]=alert(1)&gt; &#39;q&#39;",
    );
    expect(html).toContain('data-incident="inc-&quot;&gt;&lt;b&gt;"');
  });
});

describe("platform incidents on the counts-only page, over HTTP", () => {
  let server: RunningServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function serve(status: StatusFixture, detail: "summary" | "full"): Promise<Response> {
    const page = createStatusPage({
      projects: status,
      version: "1.2.3",
      apiUrl: "https://api.example.test/api/v2",
      sinks: [],
      notReadyReason: () => undefined,
      now: () => NOW,
      detail,
    });
    server = await serveStatusPage(page);
    return fetch(`${server.url}/`);
  }

  function fleet(): StatusFixture {
    const status = new StatusFixture({ now: () => NOW })
      .set("p-1", carrying("p-1", [incident({ id: "inc-1", errorClass: "quota <n> exceeded" })]))
      .set("p-2", carrying("p-2", [incident({ id: "inc-2", action: "apply_config" })]));
    status.reports.projectDescribed("p-1", projectInfo({ name: "Acme Billing" }));
    return status;
  }

  it("says how many incidents are open, with no id, name or error text", async () => {
    const response = await serve(fleet(), "summary");
    expect(response.status).toBe(200);
    const html = await response.text();
    expect(html).toContain(
      '<p class="banner incidents" id="incident-count">2 platform incidents open</p>',
    );
    expect(html.indexOf('id="incident-count"')).toBeLessThan(html.indexOf('id="summary"'));
    for (const text of [
      "inc-1",
      "inc-2",
      "p-1",
      "p-2",
      "Acme Billing",
      "quota",
      "start_compute",
      "apply_config",
      "aws-us-east-2",
      'id="incidents"',
    ]) {
      expect(html).not.toContain(text);
    }
  });

  it("serves the banners under the page's strict policy, without script", async () => {
    const response = await serve(fleet(), "full");
    expect(response.headers.get("content-security-policy")).toBe(
      "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
    );
    const html = await response.text();
    expect(banners(html)).toEqual(["inc-1", "inc-2"]);
    expect(html).toContain("quota &lt;n&gt; exceeded");
    expect(html.toLowerCase()).not.toMatch(/<script|\sstyle=|\son[a-z]+=/);
  });
});
