/**
 * The status page's compute column: shown only while the compute probe knows of a compute,
 * each compute with its reading (ratio, connections of max_connections), the advice and the
 * probe's failure with its reason; problems first, capped; the password never shown.
 */
import { describe, expect, it } from "vitest";
import { createRedactor } from "../../src/config/redact.js";
import type { Endpoint } from "../../src/contract/index.js";
import { renderStatusPage, statusView } from "../../src/status/index.js";
import type { ComputeView } from "../../src/sync/index.js";
import { StatusFixture, T0, state } from "./support.js";

const NOW = T0 + 3_600_000;
const PASSWORD = "hunter2-compute";

function endpoint(id: string, minCu = 0.25): Endpoint {
  return {
    id,
    host: `${id}.example.test`,
    proxy_host: "example.test",
    project_id: "p-1",
    branch_id: "br-1",
    region_id: "aws-us-east-2",
    type: "read_write",
    autoscaling_limit_min_cu: minCu,
    autoscaling_limit_max_cu: 2,
    current_state: "active",
    settings: {},
    pooler_enabled: false,
    pooler_mode: "transaction",
    disabled: false,
    passwordless_access: false,
    created_at: "2025-01-01T00:00:00Z",
    updated_at: "2025-01-01T00:00:00Z",
  };
}

function compute(id: string, over: Partial<ComputeView> = {}): ComputeView {
  return {
    endpointId: id,
    state: "following",
    reading: {
      atMs: NOW - 30_000,
      startedAtMs: NOW - 600_000,
      hitRatio: 98.25,
      hits: 9825,
      misses: 175,
      used: 10,
      writes: 1,
      connections: 101,
    },
    up: true,
    lastSuccessMs: NOW - 30_000,
    failure: undefined,
    advised: [],
    ...over,
  };
}

function page(status: StatusFixture): string {
  const view = statusView({
    source: status,
    tracker: status.tracker,
    version: "9.9.9",
    apiUrl: "https://api.example.test/api/v2",
    sinks: [],
    notReadyReason: () => undefined,
    redact: createRedactor([PASSWORD]),
    now: () => NOW,
  });
  return renderStatusPage(view);
}

describe("the status page's computes", () => {
  it("has no computes column while the probe knows of no compute", () => {
    const status = new StatusFixture({ now: () => NOW }).set("p-1", state("p-1"));
    const html = page(status);
    expect(html).not.toContain("<th>Computes</th>");
    expect(html).not.toContain('id="count-computes-failing"');
  });

  it("shows each compute's reading, the advice and the probe's failure, problems first", () => {
    const status = new StatusFixture({ now: () => NOW }).set("p-1", state("p-1"));
    const { reports } = status;
    reports.endpointsListed("p-1", [
      endpoint("ep-ok"),
      endpoint("ep-advised", 1),
      endpoint("ep-failing"),
    ]);
    reports.computeChanged("p-1", compute("ep-ok"));
    reports.computeChanged(
      "p-1",
      compute("ep-advised", { advised: ["file_cache", "connections"] }),
    );
    reports.computeChanged(
      "p-1",
      compute("ep-failing", {
        state: "quiet",
        reading: undefined,
        up: false,
        failure: {
          reason: "auth",
          message: `connecting: password authentication failed (${PASSWORD})`,
          sinceMs: NOW - 120_000,
          count: 2,
        },
      }),
    );
    const html = page(status);
    expect(html).toContain("<th>Computes</th>");
    const order = [...html.matchAll(/<li class="compute" data-endpoint="([^"]+)"/g)].map(
      (m) => m[1],
    );
    expect(order).toEqual(["ep-failing", "ep-advised", "ep-ok"]);
    expect(html).toContain('<span class="hit-ratio">98.25%</span>');
    expect(html).toContain('<span class="connections">101 of 112</span> connections');
    expect(html).toContain('<span class="connections">101 of 450</span> connections');
    expect(html).toContain(
      "larger compute advised: file cache hit ratio, connections near max_connections",
    );
    expect(html).toContain('<span class="reason">auth</span>');
    expect(html).toContain("2 failed probes since");
    expect(html).not.toContain(PASSWORD);
    expect(html).toContain('id="count-computes-failing" class="bad"><b>1</b>');
    expect(html).toContain('id="count-computes-advised" class="warn"><b>1</b>');
  });

  it("shows each endpoint's name beside its id, as text, the id alone while it has none", () => {
    const status = new StatusFixture({ now: () => NOW }).set("p-1", state("p-1"));
    const { reports } = status;
    reports.endpointsListed("p-1", [
      { ...endpoint("ep-named"), name: `<b>primary</b> & "rw"` },
      endpoint("ep-unnamed"),
    ]);
    reports.computeChanged("p-1", compute("ep-named"));
    reports.computeChanged("p-1", compute("ep-unnamed"));
    const html = page(status);
    expect(html).toContain(
      '<span class="endpoint-name">&lt;b&gt;primary&lt;/b&gt; &amp; &quot;rw&quot;</span> <code>ep-named</code>',
    );
    expect(html).not.toContain("<b>primary");
    expect(html).toMatch(/data-endpoint="ep-unnamed" [^>]*><code>ep-unnamed<\/code>/);
  });
});
