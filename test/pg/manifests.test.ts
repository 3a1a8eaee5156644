/**
 * The Kubernetes example for several replicas (`config/kubernetes/replicas`): a valid
 * configuration once the secret provides the API key and PGCP_STATE_URL, more than one replica,
 * no volume for state, and a rolling update that never stops a replica before its successor
 * runs. (No server needed; it runs with the Postgres tests it belongs with.)
 */
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { fromEnvironment, resolveConfig } from "../../src/config/index.js";

const file = (name: string) =>
  fileURLToPath(new URL(`../../config/kubernetes/replicas/${name}`, import.meta.url));

interface Deployment {
  kind: string;
  spec: {
    replicas: number;
    strategy: { type: string; rollingUpdate?: { maxUnavailable: number } };
    template: {
      spec: {
        containers: { args: string[]; envFrom: { secretRef: { name: string } }[] }[];
        volumes: { name: string; configMap?: unknown; persistentVolumeClaim?: unknown }[];
      };
    };
  };
}

it("the replicas example runs the Postgres store and several replicas, with no state volume", async () => {
  const kustomization = parse(await readFile(file("kustomization.yaml"), "utf8")) as {
    resources: string[];
  };
  for (const resource of kustomization.resources) {
    expect((await readFile(file(resource), "utf8")).length).toBeGreaterThan(0);
  }
  const configMap = parse(await readFile(file("configmap.yaml"), "utf8")) as {
    data: Record<string, string>;
  };
  const raw = parse(configMap.data["config.yaml"] ?? "") as Record<string, unknown>;
  const secret = fromEnvironment({
    PGCP_API_KEY: "from-the-secret",
    PGCP_STATE_URL: "postgres://pgcp:secret@postgres.example.internal:5432/pgcp",
  });
  const config = resolveConfig("replicas configmap", [raw, secret]);
  expect(config.state.url).toBe("postgres://pgcp:secret@postgres.example.internal:5432/pgcp");
  expect(config.history).toBe("postgres");
  expect(config.projects).toBe("all");
  // Without the URL, `history: postgres` is refused with a message that says what to set.
  expect(() => resolveConfig("replicas configmap", [raw, { api: { key: "k" } }])).toThrow(
    /history: postgres needs the Postgres state store/,
  );

  const docs = parseAllDocuments(await readFile(file("deployment.yaml"), "utf8")).map(
    (d) => d.toJS() as Deployment,
  );
  const deployment = docs.find((d) => d.kind === "Deployment");
  expect(deployment?.spec.replicas).toBeGreaterThan(1);
  expect(deployment?.spec.strategy.type).toBe("RollingUpdate");
  expect(deployment?.spec.strategy.rollingUpdate?.maxUnavailable).toBe(0);
  const pod = deployment?.spec.template.spec;
  expect(pod?.containers[0]?.args).toEqual(["run", "--config", "/etc/pgcp-exporter/config.yaml"]);
  expect(pod?.containers[0]?.envFrom[0]?.secretRef.name).toBe("pgcp-exporter");
  expect(pod?.volumes.filter((v) => v.persistentVolumeClaim !== undefined)).toEqual([]);
  expect(docs.map((d) => d.kind)).not.toContain("PersistentVolumeClaim");
});
