/** The selector finder the catalogue checks of the dashboards and the alert rules rely on. */
import { describe, expect, it } from "vitest";
import { catalogueProblems, selectors } from "./support/promql.js";

const names = (expr: string) => selectors(expr).map((s) => s.name);

describe("selectors()", () => {
  it("finds metric names, not functions, aggregations, keywords or label lists", () => {
    expect(
      names(
        'histogram_quantile(0.9, sum by (le, action) (rate(pgcp_operation_duration_seconds_bucket{status="finished"}[5m])))',
      ),
    ).toEqual(["pgcp_operation_duration_seconds_bucket"]);
    expect(
      names(
        "sum without (instance) (a_total) / on (job) group_left (version) max by (job, version) (b_info) and ignoring (x) c unless d offset 5m or vector(0) > bool 1",
      ),
    ).toEqual(["a_total", "b_info", "c", "d"]);
    expect(names("time() - max(x_seconds) > 1e3 * 0x1f + inf")).toEqual(["x_seconds"]);
    expect(names("count(pgcp_project_up == 0) or vector(0)")).toEqual(["pgcp_project_up"]);
    expect(names("sum\n(\n  pgcp_alerts_pending  # a comment naming not_a_metric\n)")).toEqual([
      "pgcp_alerts_pending",
    ]);
  });

  it("reads label matchers, with quotes, escapes and commas inside values", () => {
    expect(selectors('x{a="1",b!="q\\"{,}",c=~`r|s`, d !~ \'t\'}[5m:1m]')).toEqual([
      {
        name: "x",
        matchers: [
          { label: "a", op: "=", value: "1" },
          { label: "b", op: "!=", value: 'q"{,}' },
          { label: "c", op: "=~", value: "r|s" },
          { label: "d", op: "!~", value: "t" },
        ],
      },
    ]);
    expect(selectors('{__name__="y", z="1"}')).toEqual([
      { name: "y", matchers: [{ label: "z", op: "=", value: "1" }] },
    ]);
    expect(names('label_replace(up2, "dst", "$1", "src", "(.*)")')).toEqual(["up2"]);
  });

  it("throws on what it cannot read", () => {
    expect(() => selectors("x{a=}")).toThrow(/label matchers/);
    expect(() => selectors('x{a="1"')).toThrow();
    expect(() => selectors("rate(x[5m)")).toThrow(/unbalanced/);
  });
});

describe("catalogueProblems()", () => {
  it("accepts catalogue series with their labels and the target's", () => {
    expect(
      catalogueProblems(
        'sum by (le) (rate(pgcp_api_request_duration_seconds_bucket{route="listOperations",job="pgcp",le="1"}[5m])) / pgcp_api_request_duration_seconds_count',
      ),
    ).toEqual([]);
  });

  it("names unknown series, histogram family names without suffix, and unknown labels", () => {
    expect(
      catalogueProblems(
        'pgcp_operations_totl + pgcp_operation_duration_seconds + pgcp_api_requests_total{status="200"} + pgcp_alerts_pending_bucket',
      ),
    ).toEqual([
      "pgcp_operations_totl is no series of the metric catalogue",
      "pgcp_operation_duration_seconds is no series of the metric catalogue",
      "pgcp_api_requests_total has no label status",
      "pgcp_alerts_pending_bucket is no series of the metric catalogue",
    ]);
    expect(catalogueProblems("up == 0")).toEqual(["up is no series of the metric catalogue"]);
  });
});
