/**
 * The compiled wire schemas that the client reads every page and every endpoint listing with
 * (`z.compile`) must answer exactly as the schemas they come from: the same records accepted,
 * the same unknown fields dropped, the same first problem reported. Checked on records built
 * from valid ones with random fields removed, replaced by values near the edges of each rule,
 * or added.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import type { z } from "zod";
import {
  compiledEndpointsResponseSchema,
  compiledOperationsPageSchema,
  endpointsResponseSchema,
  operationsPageSchema,
} from "../../src/contract/index.js";

const OPERATION = {
  id: "0b5e1c2a-3b6f-4d2e-9a7c-1f2e3d4c5b6a",
  project_id: "shiny-wind-12345678",
  branch_id: "br-cool-frost-87654321",
  endpoint_id: "ep-calm-lake-11223344",
  action: "start_compute",
  status: "failed",
  failures_count: 2,
  created_at: "2026-11-26T10:00:00Z",
  updated_at: "2026-11-26T10:00:05.123456+02:00",
  total_duration_ms: 5123,
  error: "compute did not start",
  retry_at: "2026-11-26T10:00:06Z",
};

const ENDPOINT = {
  id: "ep-calm-lake-11223344",
  host: "ep-calm-lake-11223344.us-east-2.aws.neon.tech",
  proxy_host: "us-east-2.aws.neon.tech",
  project_id: "shiny-wind-12345678",
  branch_id: "br-cool-frost-87654321",
  region_id: "aws-us-east-2",
  type: "read_write",
  autoscaling_limit_min_cu: 0.25,
  autoscaling_limit_max_cu: 2,
  current_state: "idle",
  pending_state: "active",
  settings: { pg_settings: { max_connections: "112" }, extra: 1 },
  pooler_enabled: false,
  pooler_mode: "transaction",
  disabled: false,
  passwordless_access: true,
  last_active: "2026-11-26T09:00:00Z",
  created_at: "2026-11-26T08:00:00Z",
  updated_at: "2026-11-26T09:00:00Z",
  suspend_timeout_seconds: 0,
  provisioner: "k8s-neonvm",
};

/** Values at and past the edges of the rules the two records' fields follow. */
const EDGE_VALUES: readonly unknown[] = [
  "",
  "a",
  "A-Upper",
  "a".repeat(60),
  "a".repeat(61),
  "x".repeat(129),
  "2026-11-26T10:00:00Z",
  "2026-11-26T10:00:00.1+05:30",
  "2026-11-26T10:00Z",
  "2026-11-26 10:00:00Z",
  "2026-13-26T10:00:00Z",
  "2026-11-26T10:00:00+24:00",
  "read_only",
  "init",
  -2,
  -1,
  0,
  0.2,
  0.25,
  1.5,
  604_800,
  604_801,
  2 ** 53,
  null,
  true,
  [],
  {},
  { pg_settings: { a: 1 } },
];

/** A record with some fields removed, some replaced by edge values, some unknown ones added. */
function mutated(valid: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  const keys = Object.keys(valid);
  const change = fc.oneof(
    fc.constant({ kind: "keep" as const }),
    fc.constant({ kind: "drop" as const }),
    fc.constantFrom(...EDGE_VALUES).map((value) => ({ kind: "set" as const, value })),
  );
  return fc
    .record({
      changes: fc.array(change, { minLength: keys.length, maxLength: keys.length }),
      extra: fc.dictionary(
        fc.constantFrom("unknown", "x_new", "id2"),
        fc.constantFrom(...EDGE_VALUES),
      ),
    })
    .map(({ changes, extra }) => {
      const record: Record<string, unknown> = { ...extra };
      keys.forEach((key, i) => {
        const c = changes[i] ?? { kind: "keep" };
        if (c.kind === "keep") record[key] = valid[key];
        else if (c.kind === "set") record[key] = c.value;
      });
      return record;
    });
}

/** Mostly valid records, so that both acceptance and each kind of rejection are reached. */
function records(valid: Record<string, unknown>): fc.Arbitrary<Record<string, unknown>> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant(valid) },
    { weight: 3, arbitrary: mutated(valid) },
  );
}

function outcome(result: z.ZodSafeParseResult<unknown>): unknown {
  return result.success ? { data: result.data } : { issues: result.error.issues };
}

/** Both schemas accept the same inputs with the same output, or report the same issues. */
function expectSameAnswers(
  compiled: z.ZodType,
  runtime: z.ZodType,
  inputs: fc.Arbitrary<unknown>,
): void {
  fc.assert(
    fc.property(inputs, (input) => {
      expect(outcome(compiled.safeParse(input))).toStrictEqual(outcome(runtime.safeParse(input)));
    }),
    { numRuns: 2000 },
  );
}

describe("the compiled wire schemas", () => {
  it("read operations pages as the runtime schema does", () => {
    const pages = fc.oneof(
      fc.record(
        {
          operations: fc.array(records(OPERATION), { maxLength: 4 }),
          pagination: fc.oneof(
            fc.constant({ cursor: "2026-11-26T10:00:00.000000Z" }),
            fc.constant({ cursor: "" }),
            fc.constant({}),
          ),
        },
        { requiredKeys: ["operations"] },
      ),
      fc.constantFrom<unknown>(null, [], {}, { operations: {} }),
    );
    expectSameAnswers(compiledOperationsPageSchema, operationsPageSchema, pages);
  });

  it("read endpoint listings as the runtime schema does", () => {
    const listings = fc.record({ endpoints: fc.array(records(ENDPOINT), { maxLength: 3 }) });
    expectSameAnswers(compiledEndpointsResponseSchema, endpointsResponseSchema, listings);
  });

  it("accept the valid records and drop their unknown fields", () => {
    const page = { operations: [{ ...OPERATION, unknown_field: 1 }], extra: true };
    const parsed = compiledOperationsPageSchema.parse(page);
    expect(parsed).toStrictEqual({ operations: [OPERATION] });
    const listing = compiledEndpointsResponseSchema.parse({ endpoints: [ENDPOINT] });
    expect(listing.endpoints[0]?.settings).toEqual(ENDPOINT.settings);
  });
});
