import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import {
  idempotencyKey,
  RESERVED_HEADERS,
  signature,
  webhookAlertSchema,
  webhookPayload,
  webhookPayloadSchema,
  webhookRequest,
} from "../../../src/alerts/sinks/index.js";
import { PACKAGE } from "../../../src/version.js";
import { makeAlert, makeIncidentAlert, mixedBatch, PROJECT } from "./fixtures.js";
import { DOCS_PATH, loadDocsExample, verifyAsDocumented } from "./signature-example.js";

const NOW = Date.UTC(2025, 5, 1, 12, 5, 32, 104);

describe("webhook payload", () => {
  it("maps every alert field to snake_case, with null for what is absent", () => {
    const [failed, stuck, , recovered] = mixedBatch();
    const payload = webhookPayload([failed!, stuck!, recovered!], NOW);
    expect(webhookPayloadSchema.parse(payload)).toEqual(payload);
    expect(payload).toMatchObject({
      version: 1,
      group_key: PROJECT,
      sent_at: "2025-06-01T12:05:32.104Z",
    });
    expect(payload.alerts[0]).toEqual({
      id: failed!.id,
      kind: "operation_failed",
      project_id: PROJECT,
      operation_id: failed!.operationId,
      branch_id: "br-main-001",
      endpoint_id: "ep-primary-001",
      action: "apply_config",
      status: "failed",
      failures_count: 3,
      error: "compute start failed: could not allocate",
      created_at: "2025-06-01T12:00:00.000Z",
      updated_at: "2025-06-01T12:05:30.000Z",
      duration_seconds: 330,
      detected_at: "2025-06-01T12:05:31.000Z",
      link: failed!.link,
      resolves: null,
      also_resolves: [],
      advice: null,
      incident: null,
    });
    expect(payload.alerts[1]).toMatchObject({ error: null, kind: "operation_stuck" });
    expect(payload.alerts[2]).toMatchObject({ kind: "operation_recovered", resolves: failed!.id });
    // A recovery lists the other alerts of its operation it resolves; others list none.
    const [resolving] = webhookPayload(
      [{ ...recovered!, alsoResolves: [stuck!.id, "earlier"] }],
      NOW,
    ).alerts;
    expect(resolving).toMatchObject({
      resolves: failed!.id,
      also_resolves: [stuck!.id, "earlier"],
    });
    expect(payload.alerts[2]!.also_resolves).toEqual([]);
    const bare = makeAlert();
    delete bare.branchId;
    delete bare.endpointId;
    delete bare.link;
    expect(webhookPayload([bare], NOW).alerts[0]).toMatchObject({
      branch_id: null,
      endpoint_id: null,
      link: null,
    });
  });

  it("carries the names beside the ids, each absent while unknown", () => {
    const named = makeAlert({
      projectName: "Tenant Acme",
      branchName: "preview/pr-812",
      endpointName: "primary-rw",
    });
    const [alert] = webhookPayload([named], NOW).alerts;
    expect(alert).toMatchObject({
      project_id: PROJECT,
      project_name: "Tenant Acme",
      branch_name: "preview/pr-812",
      endpoint_name: "primary-rw",
    });
    const [bare] = webhookPayload([makeAlert({ branchName: "main" })], NOW).alerts;
    expect(bare).toMatchObject({ branch_name: "main" });
    expect(bare).not.toHaveProperty("project_name");
    expect(bare).not.toHaveProperty("endpoint_name");
    expect(webhookPayloadSchema.parse({ ...webhookPayload([named], NOW) })).toBeTruthy();
  });

  it("is documented field by field in docs/webhook.md", () => {
    const page = readFileSync(DOCS_PATH, "utf8");
    const fields = [
      ...Object.keys(webhookPayloadSchema.shape),
      ...Object.keys(webhookAlertSchema.shape),
    ];
    for (const field of fields) expect(page).toContain(`| \`${field}\``);
    const incident = webhookAlertSchema.shape.incident.unwrap();
    for (const field of Object.keys(incident.shape)) {
      expect(page).toContain(`| \`incident.${field}\``);
    }
    for (const header of [
      "Idempotency-Key",
      "X-Pgcp-Timestamp",
      "X-Pgcp-Signature",
      "User-Agent",
    ]) {
      expect(page).toContain(`| \`${header}\``);
    }
  });

  it("carries a platform incident with the same incident_id through its updates and resolution", () => {
    const alerts = (["opened", "updated", "resolved"] as const).map((state, i) =>
      makeIncidentAlert(state, { projectCount: 120 + i }),
    );
    const bodies = alerts.map((alert) => webhookPayload([alert], NOW));
    for (const body of bodies) expect(webhookPayloadSchema.parse(body)).toEqual(body);
    const sent = bodies.map((b) => b.alerts[0]!);
    expect(sent.map((a) => a.incident?.incident_id)).toEqual(Array(3).fill("inc-7f3a2b"));
    expect(sent.map((a) => a.incident?.state)).toEqual(["opened", "updated", "resolved"]);
    expect(new Set(sent.map((a) => a.id)).size).toBe(3);
    expect(sent[1]).toMatchObject({
      kind: "platform_incident",
      operation_id: "inc-7f3a2b",
      status: "updated",
      action: "start_compute",
      error: "safekeeper quorum not reached",
      branch_id: null,
      endpoint_id: null,
      advice: null,
    });
    const incident = sent[1]!.incident!;
    expect(incident).toEqual({
      incident_id: "inc-7f3a2b",
      state: "updated",
      region_id: "aws-us-east-2",
      error_class: "safekeeper quorum not reached",
      projects: incident.projects,
      project_count: 121,
    });
    // The first 100 to join, in order, each named once known; the count is the total.
    expect(incident.projects).toHaveLength(100);
    expect(incident.projects.slice(0, 2)).toEqual([
      { project_id: "proj-000", project_name: "Tenant Acme" },
      { project_id: "proj-001" },
    ]);
  });

  it("keys a batch by its set of alert ids, whatever their order", () => {
    const [a, b, c] = [makeAlert(), makeAlert(), makeAlert()];
    const key = idempotencyKey([a, b, c]);
    expect(key).toMatch(/^[0-9a-f]{64}$/);
    expect(idempotencyKey([c, a, b])).toBe(key);
    expect(idempotencyKey([a, b, c, a])).toBe(key);
    expect(idempotencyKey([a, b])).not.toBe(key);
    expect(idempotencyKey([a, b, makeAlert()])).not.toBe(key);
  });

  it("signs `<timestamp>.<body>` with HMAC-SHA256", () => {
    const expected = createHmac("sha256", "k").update("1700000000.{}").digest("hex");
    expect(signature("k", 1_700_000_000, "{}")).toBe(`v1=${expected}`);
  });

  it("builds the headers, with the sink's own winning over custom ones", () => {
    const alerts = [makeAlert()];
    const { body, headers } = webhookRequest(alerts, {
      nowMs: NOW,
      secret: "s3cret-signing-key",
      headers: {
        Authorization: "Bearer abc",
        "X-Pgcp-Signature": "v1=forged",
        "Idempotency-Key": "x",
      },
    });
    expect(JSON.parse(body)).toEqual(webhookPayload(alerts, NOW));
    expect(headers).toEqual({
      authorization: "Bearer abc",
      "content-type": "application/json",
      "user-agent": `pgcp-exporter/${PACKAGE.version}`,
      "idempotency-key": idempotencyKey(alerts),
      "x-pgcp-timestamp": String(Math.floor(NOW / 1000)),
      "x-pgcp-signature": signature("s3cret-signing-key", Math.floor(NOW / 1000), body),
    });
    expect(webhookRequest(alerts, { nowMs: NOW }).headers).not.toHaveProperty("x-pgcp-signature");
    expect(RESERVED_HEADERS.has("x-pgcp-signature")).toBe(true);
  });
});

describe("the documented verification", () => {
  const secret = "whsec-test-0123456789";
  const { body, headers } = webhookRequest([makeAlert()], { nowMs: NOW, secret });
  const nowSeconds = NOW / 1000;

  it("is the code block the docs show", async () => {
    const fromDocs = await loadDocsExample();
    for (const verify of [fromDocs, verifyAsDocumented]) {
      expect(verify(secret, headers, Buffer.from(body), nowSeconds)).toBe(true);
      expect(verify(secret, headers, body, nowSeconds + 299)).toBe(true);
      // Tampered body, wrong secret, stale or future timestamp, missing or malformed headers.
      expect(verify(secret, headers, body.replace("failed", "fixed"), nowSeconds)).toBe(false);
      expect(verify("another-secret", headers, body, nowSeconds)).toBe(false);
      expect(verify(secret, headers, body, nowSeconds + 301)).toBe(false);
      expect(verify(secret, headers, body, nowSeconds - 301)).toBe(false);
      const without = (name: string): Record<string, string> =>
        Object.fromEntries(Object.entries(headers).filter(([n]) => n !== name));
      expect(verify(secret, without("x-pgcp-signature"), body, nowSeconds)).toBe(false);
      expect(verify(secret, without("x-pgcp-timestamp"), body, nowSeconds)).toBe(false);
      const sig = headers["x-pgcp-signature"]!;
      for (const bad of [sig.slice(0, -2), `${sig}00`, sig.replace("v1=", "v0="), "v1=zz"]) {
        expect(verify(secret, { ...headers, "x-pgcp-signature": bad }, body, nowSeconds)).toBe(
          false,
        );
      }
      // A replayed body under a fresh timestamp does not verify.
      const later = String(Math.floor(nowSeconds) + 60);
      expect(verify(secret, { ...headers, "x-pgcp-timestamp": later }, body, nowSeconds)).toBe(
        false,
      );
    }
  });
});
