/**
 * The Kubernetes examples, `config/kubernetes` (one replica) and `config/kubernetes/replicas`:
 * the ConfigMap holds a valid configuration where the Deployment looks for it, and each folder,
 * built with `kubectl kustomize` (Debian's `kubernetes-client` package: the tests fail under CI
 * when it is missing, and are skipped elsewhere), gives pods that meet the "restricted" Pod
 * Security Standard, the alert rules of config/prometheus/alerts.yml as a PrometheusRule, and a
 * ServiceMonitor that scrapes the Service under the job those rules expect. The kustomization
 * example of docs/operations.md builds on both folders as it says.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parse, parseAllDocuments, stringify } from "yaml";
import { resolveConfig } from "../../src/config/index.js";
import { requireBinary } from "../e2e/support/binaries.js";
import { ALERTS_FILE, RULES_JOB } from "../rules/support.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import { restrictedProblems, type PodSpec, type PodTemplate } from "./support/pod-security.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const dir = (name: string) => path.join(ROOT, "config/kubernetes", name);

/** Every folder `kubectl apply -k` is told to take. */
const OVERLAYS = ["config/kubernetes", "config/kubernetes/replicas"] as const;

/** The Debian package that ships kubectl. */
const KUBECTL_PACKAGE = "kubernetes-client";

interface Manifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly labels?: Record<string, string> };
  readonly spec?: Record<string, unknown>;
}

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

function requireKubectl(skip: (note: string) => never): string {
  return requireBinary("kubectl", skip, KUBECTL_PACKAGE);
}

/** `kubectl kustomize DIR`, parsed. */
function kustomize(kubectl: string, folder: string): Manifest[] {
  const run = spawnSync(kubectl, ["kustomize", folder], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 30_000,
  });
  if (run.error !== undefined) throw run.error;
  expect(run.status, `kubectl kustomize ${folder}: ${run.stderr}`).toBe(0);
  return parseAllDocuments(run.stdout).map((d) => d.toJS() as Manifest);
}

const built = new Map<string, Manifest[]>();

/** `folder` built once for every test (`skip`: see requireBinary). */
function build(folder: string, skip: (note: string) => never): Manifest[] {
  let manifests = built.get(folder);
  if (manifests === undefined) {
    manifests = kustomize(requireKubectl(skip), folder);
    built.set(folder, manifests);
  }
  return manifests;
}

function only(manifests: readonly Manifest[], kind: string): Manifest {
  const found = manifests.filter((m) => m.kind === kind);
  expect(found.map((m) => m.kind)).toEqual([kind]);
  return found[0]!;
}

/** The pod templates of the workloads among `manifests`, by kind and name. */
function podTemplates(manifests: readonly Manifest[]): [string, PodTemplate][] {
  return manifests.flatMap((m): [string, PodTemplate][] => {
    const name = `${m.kind} ${m.metadata.name}`;
    const spec = (m.spec ?? {}) as {
      template?: PodTemplate;
      jobTemplate?: { spec: { template: PodTemplate } };
    };
    if (m.kind === "Pod") return [[name, { spec: m.spec as unknown as PodSpec }]];
    const template = spec.jobTemplate?.spec.template ?? spec.template;
    return template === undefined ? [] : [[name, template]];
  });
}

describe.each(OVERLAYS.map((o) => [o] as const))("kubectl kustomize %s", (folder) => {
  it("builds the exporter's resources, each labelled with its name", (ctx) => {
    const manifests = build(folder, (note) => ctx.skip(note));
    const kinds = manifests.map((m) => m.kind);
    for (const kind of ["ConfigMap", "Deployment", "Service", "ServiceMonitor", "PrometheusRule"]) {
      expect(kinds).toContain(kind);
    }
    for (const m of manifests) {
      expect(m.metadata.labels?.["app.kubernetes.io/name"], `${m.kind} ${m.metadata.name}`).toBe(
        "pgcp-exporter",
      );
    }
  });

  it("gives pods that meet the restricted Pod Security Standard", (ctx) => {
    const templates = podTemplates(build(folder, (note) => ctx.skip(note)));
    expect(templates.length).toBeGreaterThan(0);
    for (const [name, template] of templates) {
      expect(restrictedProblems(template), name).toEqual([]);
    }
  });

  it("runs on a read-only root file system, without a service account token", (ctx) => {
    for (const [name, { spec }] of podTemplates(build(folder, (note) => ctx.skip(note)))) {
      const pod = spec as { automountServiceAccountToken?: boolean };
      expect(pod.automountServiceAccountToken, name).toBe(false);
      for (const c of spec.containers) {
        const context = c.securityContext as { readOnlyRootFilesystem?: boolean } | undefined;
        expect(context?.readOnlyRootFilesystem, `${name} ${c.name}`).toBe(true);
      }
    }
  });

  it("holds the rule groups of config/prometheus/alerts.yml as a PrometheusRule", (ctx) => {
    const rule = only(
      build(folder, (note) => ctx.skip(note)),
      "PrometheusRule",
    );
    const alerts = parse(readFileSync(ALERTS_FILE, "utf8")) as { groups: unknown[] };
    expect(rule.apiVersion).toBe("monitoring.coreos.com/v1");
    expect(rule.spec?.groups).toEqual(alerts.groups);
  });

  it("has a ServiceMonitor that scrapes the Service's port under the job the rules expect", (ctx) => {
    const manifests = build(folder, (note) => ctx.skip(note));
    const service = only(manifests, "Service");
    const monitor = only(manifests, "ServiceMonitor");
    const spec = monitor.spec as {
      selector: { matchLabels: Record<string, string> };
      endpoints: { port: string }[];
      jobLabel?: string;
    };
    expect(service.metadata.labels).toMatchObject(spec.selector.matchLabels);
    const ports = (service.spec as { ports: { name: string }[] }).ports.map((p) => p.name);
    for (const endpoint of spec.endpoints) expect(ports).toContain(endpoint.port);
    // The Prometheus Operator names the job after the Service unless jobLabel says otherwise.
    expect(spec.jobLabel).toBeUndefined();
    expect(service.metadata.name).toBe(RULES_JOB);
  });
});

/** The first `yaml` block of the "## Kubernetes" section of docs/operations.md. */
function documentedKustomization(): {
  resources: string[];
  images: { name: string; newName: string; newTag: string }[];
  patches: { target: { kind: string }; patch: string }[];
} {
  const doc = readFileSync(path.join(ROOT, "docs/operations.md"), "utf8");
  const section = /^## Kubernetes\n([\s\S]*?)^## /m.exec(doc)?.[1] ?? "";
  const block = /^```yaml\n([\s\S]*?)^```/m.exec(section)?.[1];
  expect(block, "docs/operations.md's Kubernetes section has a yaml block").toBeDefined();
  return parse(block!) as ReturnType<typeof documentedKustomization>;
}

/** The kustomize that `kubectl` embeds, as its major version (undefined: older than v4). */
function kustomizeMajor(kubectl: string): number | undefined {
  const run = spawnSync(kubectl, ["version", "--client"], { encoding: "utf8", timeout: 30_000 });
  const match = /Kustomize Version: v(\d+)/.exec(`${run.stdout}${run.stderr}`);
  return match === null ? undefined : Number(match[1]);
}

describe.each(OVERLAYS.map((o) => [o] as const))("the documented kustomization on %s", (folder) => {
  it("sets the image and adds the release label to the ServiceMonitor and PrometheusRule", async (ctx) => {
    const kubectl = requireKubectl((note) => ctx.skip(note));
    const major = kustomizeMajor(kubectl);
    if (major === undefined || major < 4) {
      // kubectl before 1.21 embeds kustomize v2, which has no `patches:` with targets.
      ctx.skip(`${kubectl} embeds a kustomize older than v4: the example needs kubectl 1.21+`);
    }
    const example = documentedKustomization();
    const overlay = await tempDir("pgcp-kustomize-");
    try {
      const resources = [path.relative(overlay, path.join(ROOT, folder))];
      await writeFile(
        path.join(overlay, "kustomization.yaml"),
        stringify({ ...example, resources }),
      );
      const manifests = kustomize(kubectl, overlay);

      const [image] = example.images;
      const deployment = only(manifests, "Deployment").spec as {
        template: { spec: { containers: { image: string }[] } };
      };
      expect(deployment.template.spec.containers.map((c) => c.image)).toEqual([
        `${image!.newName}:${image!.newTag}`,
      ]);

      const [op] = parse(example.patches[0]!.patch) as { path: string; value: string }[];
      expect(op!.path).toBe("/metadata/labels/release");
      for (const kind of ["ServiceMonitor", "PrometheusRule"]) {
        expect(only(manifests, kind).metadata.labels?.release, kind).toBe(op!.value);
      }
      expect(only(manifests, "Deployment").metadata.labels?.release).toBeUndefined();
    } finally {
      await removeDir(overlay);
    }
  });
});
