/**
 * The "restricted" Pod Security Standard check that the Kubernetes examples' tests use: it
 * accepts the example Deployment's pod as written, and names each breach of the standard.
 */
import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { restrictedProblems, type PodTemplate } from "./support/pod-security.js";

const DEPLOYMENT = fileURLToPath(
  new URL("../../config/kubernetes/deployment.yaml", import.meta.url),
);

type Fields = Record<string, unknown>;

interface ExampleContainer {
  readonly name: string;
  readonly securityContext: Fields & { capabilities: { drop: string[]; add?: string[] } };
  readonly ports: Fields[];
  readonly readinessProbe: { httpGet: Fields };
}

/** The example's pod template, as plain JSON that a breach may change. */
interface ExamplePod {
  readonly spec: Fields & {
    securityContext: Fields;
    containers: ExampleContainer[];
    volumes: Fields[];
  };
}

/** The pod template of config/kubernetes/deployment.yaml. */
function examplePod(): ExamplePod {
  const docs = parseAllDocuments(readFileSync(DEPLOYMENT, "utf8")).map(
    (d) => d.toJS() as { kind: string; spec: { template: ExamplePod } },
  );
  return structuredClone(docs.find((d) => d.kind === "Deployment")!.spec.template);
}

/** The exporter's container. */
const main = (p: ExamplePod) => p.spec.containers[0]!;

/** A breach, how to make it in the example pod, and what the check must say. */
const BREACHES: readonly [string, (pod: ExamplePod) => void, string][] = [
  [
    "no seccomp profile",
    (p) => delete p.spec.securityContext.seccompProfile,
    "seccompProfile is unset",
  ],
  [
    "an unconfined seccomp profile",
    (p) => (p.spec.securityContext.seccompProfile = { type: "Unconfined" }),
    "Unconfined",
  ],
  [
    "privilege escalation allowed",
    (p) => (main(p).securityContext.allowPrivilegeEscalation = true),
    "allowPrivilegeEscalation",
  ],
  [
    "privilege escalation left unset",
    (p) => delete main(p).securityContext.allowPrivilegeEscalation,
    "allowPrivilegeEscalation",
  ],
  [
    "no runAsNonRoot",
    (p) => {
      delete p.spec.securityContext.runAsNonRoot;
      delete main(p).securityContext.runAsNonRoot;
    },
    "runAsNonRoot is not true",
  ],
  [
    "runAsNonRoot false on a container",
    (p) => (main(p).securityContext.runAsNonRoot = false),
    "runAsNonRoot is false",
  ],
  ["root user", (p) => (p.spec.securityContext.runAsUser = 0), "runAsUser is 0"],
  ["capabilities kept", (p) => (main(p).securityContext.capabilities.drop = []), "lacks ALL"],
  [
    "a capability added",
    (p) => (main(p).securityContext.capabilities.add = ["SYS_ADMIN"]),
    "adds capability SYS_ADMIN",
  ],
  ["a privileged container", (p) => (main(p).securityContext.privileged = true), "privileged"],
  ["the host's network", (p) => (p.spec.hostNetwork = true), "hostNetwork"],
  ["the host's process ids", (p) => (p.spec.hostPID = true), "hostPID"],
  ["a host port", (p) => (main(p).ports[0]!.hostPort = 9642), "hostPort 9642"],
  [
    "a hostPath volume",
    (p) => p.spec.volumes.push({ name: "host", hostPath: { path: "/" } }),
    "type hostPath",
  ],
  [
    "an nfs volume",
    (p) => p.spec.volumes.push({ name: "nfs", nfs: { server: "s", path: "/" } }),
    "type nfs",
  ],
  [
    "an unsafe sysctl",
    (p) => (p.spec.securityContext.sysctls = [{ name: "kernel.msgmax", value: "1" }]),
    "sysctl kernel.msgmax",
  ],
  ["an unmasked /proc", (p) => (main(p).securityContext.procMount = "Unmasked"), "procMount"],
  [
    "an unconfined AppArmor profile",
    (p) => (p.spec.securityContext.appArmorProfile = { type: "Unconfined" }),
    "appArmorProfile",
  ],
  [
    "an SELinux user",
    (p) => (p.spec.securityContext.seLinuxOptions = { user: "system_u" }),
    "seLinuxOptions.user",
  ],
  [
    "a probe on another host",
    (p) => (main(p).readinessProbe.httpGet.host = "10.0.0.1"),
    "readinessProbe sets a host",
  ],
  [
    "an init container that breaks it",
    (p) => (p.spec.initContainers = [{ name: "init", securityContext: {} }]),
    "container init: allowPrivilegeEscalation",
  ],
];

describe("restrictedProblems", () => {
  it("accepts the example Deployment's pod", () => {
    expect(restrictedProblems(examplePod() as unknown as PodTemplate)).toEqual([]);
  });

  it.each(BREACHES)("names %s", (_name, breach, expected) => {
    const pod = examplePod();
    breach(pod);
    expect(restrictedProblems(pod as unknown as PodTemplate).join("\n")).toContain(expected);
  });
});
