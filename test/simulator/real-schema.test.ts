/**
 * The simulator's records carry every field the real API's OpenAPI document requires of
 * operations, endpoints and project list entries (the seed shows fewer).
 */
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { afterAll, beforeAll, expect, test } from "vitest";
import { parse } from "yaml";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { readyProject } from "./fixtures.js";

interface OpenApiSchema {
  required?: string[];
  enum?: string[];
}

let schemas: Record<string, OpenApiSchema>;
let t: TestSimulator;

beforeAll(async () => {
  const require = createRequire(import.meta.url);
  const path = require.resolve("@neondatabase/api-client/public-v2-for-users.gen.yaml");
  const document = parse(await readFile(path, "utf8")) as {
    components: { schemas: Record<string, OpenApiSchema> };
  };
  schemas = document.components.schemas;
  t = await startTestSimulator();
});

afterAll(async () => {
  await t.close();
});

function required(name: string): string[] {
  const list = schemas[name]?.required;
  if (list === undefined) throw new Error(`no required list for ${name}`);
  return list;
}

test("operations, endpoints and projects have the real schema's required fields", async () => {
  const p = await readyProject(t);
  const truth = await t.sim.truth(p.projectId);
  expect(truth.length).toBeGreaterThan(0);
  for (const op of truth) {
    for (const field of required("Operation")) expect(op, field).toHaveProperty(field);
  }
  for (const field of required("Endpoint")) expect(p.endpoint, field).toHaveProperty(field);
  const projects = await t.api<{ projects: object[] }>("GET", "/projects");
  for (const field of required("ProjectListItem")) {
    expect(projects.body.projects[0], field).toHaveProperty(field);
  }
});

test("status values: the real enum, except the seed's cancellation_pending for cancelling", () => {
  const real = schemas.OperationStatus?.enum ?? [];
  const simulated = [
    "scheduling",
    "running",
    "finished",
    "failed",
    "error",
    "cancelled",
    "skipped",
  ];
  for (const status of simulated) expect(real).toContain(status);
  expect(real).toContain("cancelling");
  expect(schemas.EndpointState?.enum).toEqual(["init", "active", "idle"]);
});
