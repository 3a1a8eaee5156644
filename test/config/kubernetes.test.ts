import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { expect, it } from "vitest";
import { parse, parseAllDocuments } from "yaml";
import { resolveConfig } from "../../src/config/index.js";

const dir = (name: string) =>
  fileURLToPath(new URL(`../../config/kubernetes/${name}`, import.meta.url));

interface Doc {
  kind: string;
  data?: Record<string, string>;
  spec?: {
    template?: {
      spec: {
        containers: {
          args: string[];
          ports: { containerPort: number }[];
          volumeMounts: { mountPath: string }[];
        }[];
      };
    };
  };
}

it("the Kubernetes example runs a valid configuration where the Deployment looks for it", async () => {
  const configMap = parse(await readFile(dir("configmap.yaml"), "utf8")) as Doc;
  const raw = parse(configMap.data?.["config.yaml"] ?? "") as Record<string, unknown>;
  const config = resolveConfig("configmap", [raw, { api: { key: "from-the-secret" } }]);

  const docs = parseAllDocuments(await readFile(dir("deployment.yaml"), "utf8")).map(
    (d) => d.toJS() as Doc,
  );
  const container = docs.find((d) => d.kind === "Deployment")?.spec?.template?.spec.containers[0];
  expect(container?.args).toEqual(["run", "--config", "/etc/pgcp-exporter/config.yaml"]);
  expect(container?.ports[0]?.containerPort).toBe(Number(config.listen.split(":").pop()));
  expect(container?.volumeMounts.map((m) => m.mountPath)).toContain(config.state.dir);
});
