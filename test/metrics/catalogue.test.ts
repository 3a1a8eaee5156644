import { afterEach, describe, expect, it } from "vitest";
import { CATALOGUE, type MetricSpec } from "../../src/metrics/index.js";
import { closeAll, metricsFor, render } from "./support/rendering.js";
import { PROBES, feedEverything } from "./support/scenario.js";

afterEach(closeAll);

const FORBIDDEN_LABELS = ["type", "region", "instance", "job"];
/** Labels that would carry an operation id, one series per operation. */
const OPERATION_ID_LABELS = ["operation", "operation_id", "id"];

const each = (rule: string, check: (spec: MetricSpec) => void) => {
  it.each(CATALOGUE.map((spec) => [spec.name, spec] as const))(`%s: ${rule}`, (_, spec) => {
    check(spec);
  });
};

describe("the catalogue's naming rules", () => {
  it("has no name twice", () => {
    const names = CATALOGUE.map((s) => s.name);
    expect(new Set(names).size).toBe(names.length);
  });

  each("is prefixed pgcp_ and snake_case", (spec) => {
    expect(spec.name).toMatch(/^pgcp_[a-z][a-z0-9]*(_[a-z0-9]+)*$/);
  });

  each("ends in _total exactly when it is a counter", (spec) => {
    expect(spec.name.endsWith("_total")).toBe(spec.type === "counter");
  });

  each("does not end in a suffix Prometheus adds to histograms", (spec) => {
    expect(spec.name).not.toMatch(/_(bucket|sum|count)$/);
  });

  each("names a time *_timestamp_seconds, a gauge", (spec) => {
    if (!spec.name.includes("timestamp")) return;
    expect(spec.name).toMatch(/_timestamp_seconds$/);
    expect(spec.type).toBe("gauge");
  });

  each("ends in its unit, a base unit", (spec) => {
    const base = spec.name.replace(/_total$/, "");
    if (spec.unit !== "") expect(base.endsWith(`_${spec.unit}`)).toBe(true);
    expect(spec.unit).not.toMatch(/milli|micro|minute|hour|percent/);
    if (base.endsWith("_seconds")) expect(spec.unit).toBe("seconds");
  });

  each("is an _info family only as a gauge without a unit", (spec) => {
    if (!spec.name.endsWith("_info")) return;
    expect(spec.type).toBe("gauge");
    expect(spec.unit).toBe("");
  });

  each("has snake_case labels, none forbidden, no operation id", (spec) => {
    expect(new Set(spec.labels).size).toBe(spec.labels.length);
    for (const label of spec.labels) {
      expect(label).toMatch(/^[a-z][a-z0-9_]*$/);
      expect(label.startsWith("__")).toBe(false);
      expect(FORBIDDEN_LABELS).not.toContain(label);
      expect(OPERATION_ID_LABELS).not.toContain(label);
    }
    if (spec.type === "histogram") expect(spec.labels).not.toContain("le");
  });

  each("has buckets, strictly increasing, exactly when it is a histogram", (spec) => {
    expect(spec.buckets !== undefined).toBe(spec.type === "histogram");
    const buckets = spec.buckets ?? [];
    for (let i = 1; i < buckets.length; i++) expect(buckets[i]).toBeGreaterThan(buckets[i - 1]!);
  });

  each("has a one-line help sentence", (spec) => {
    expect(spec.help).toMatch(/^\S[^\n]*\.$/);
  });
});

describe("the registry derived from the catalogue", () => {
  it("renders every family of the catalogue, with its type, and no other pgcp_ family", async () => {
    const text = await render(metricsFor({ perProjectHistograms: true }));
    const rendered = [...text.matchAll(/^# TYPE (pgcp_\S+) (\S+)$/gm)].map((m) => [m[1], m[2]]);
    expect(rendered).toEqual(CATALOGUE.map((s) => [s.name, s.type]));
  });

  it("gives every family a series in the full scenario", async () => {
    const metrics = metricsFor({ perProjectHistograms: true, ...PROBES });
    feedEverything(metrics);
    const text = await render(metrics);
    const withSamples = new Set(
      [...text.matchAll(/^(pgcp_[a-z0-9_]+?)(_bucket|_sum|_count)?[{ ]/gm)].map((m) => m[1]),
    );
    expect(CATALOGUE.map((s) => s.name).filter((name) => !withSamples.has(name))).toEqual([]);
  });

  it("serves no label named type, region, instance or job, process metrics included", async () => {
    const metrics = metricsFor({ perProjectHistograms: true, ...PROBES });
    feedEverything(metrics);
    const text = await render(metrics);
    const labelNames = new Set(
      [...text.matchAll(/[{,]([a-zA-Z_][a-zA-Z0-9_]*)="/g)].map((m) => m[1]),
    );
    for (const label of FORBIDDEN_LABELS) expect(labelNames).not.toContain(label);
  });
});
