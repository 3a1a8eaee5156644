/**
 * The Kubernetes "restricted" Pod Security Standard (which includes the "baseline" one), as
 * the PodSecurity admission controller checks a Linux pod: every control of
 * https://kubernetes.io/docs/concepts/security/pod-security-standards/. `restrictedProblems`
 * lists what a pod spec breaks, one line per problem; an empty list is a pass.
 */

interface SecurityContext {
  readonly privileged?: boolean;
  readonly allowPrivilegeEscalation?: boolean;
  readonly runAsNonRoot?: boolean;
  readonly runAsUser?: number;
  readonly procMount?: string;
  readonly capabilities?: { readonly add?: readonly string[]; readonly drop?: readonly string[] };
  readonly seccompProfile?: { readonly type?: string };
  readonly appArmorProfile?: { readonly type?: string };
  readonly seLinuxOptions?: {
    readonly type?: string;
    readonly user?: string;
    readonly role?: string;
  };
  readonly windowsOptions?: { readonly hostProcess?: boolean };
}

interface Handler {
  readonly httpGet?: { readonly host?: string };
  readonly tcpSocket?: { readonly host?: string };
}

interface Container {
  readonly name: string;
  readonly securityContext?: SecurityContext;
  readonly ports?: readonly { readonly hostPort?: number }[];
  readonly livenessProbe?: Handler;
  readonly readinessProbe?: Handler;
  readonly startupProbe?: Handler;
  readonly lifecycle?: { readonly postStart?: Handler; readonly preStop?: Handler };
}

export interface PodSpec {
  readonly hostNetwork?: boolean;
  readonly hostPID?: boolean;
  readonly hostIPC?: boolean;
  readonly securityContext?: SecurityContext & {
    readonly sysctls?: readonly { readonly name: string }[];
  };
  readonly containers: readonly Container[];
  readonly initContainers?: readonly Container[];
  readonly ephemeralContainers?: readonly Container[];
  readonly volumes?: readonly ({ readonly name: string } & Record<string, unknown>)[];
}

export interface PodTemplate {
  readonly metadata?: { readonly annotations?: Readonly<Record<string, string>> };
  readonly spec: PodSpec;
}

/** Volume types the restricted level allows. */
const VOLUME_TYPES = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);

/** Sysctls the baseline level allows. */
const SAFE_SYSCTLS = new Set([
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.ip_unprivileged_port_start",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_local_reserved_ports",
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
]);

const SELINUX_TYPES = new Set([
  "",
  "container_t",
  "container_init_t",
  "container_kvm_t",
  "container_engine_t",
]);

/** Seccomp profiles the restricted level allows. */
const SECCOMP_TYPES = new Set(["RuntimeDefault", "Localhost"]);

/** What `template` breaks of the restricted Pod Security Standard (empty: nothing). */
export function restrictedProblems(template: PodTemplate): string[] {
  const pod = template.spec;
  const problems: string[] = [];
  const podContext = pod.securityContext ?? {};
  const containers = [
    ...pod.containers,
    ...(pod.initContainers ?? []),
    ...(pod.ephemeralContainers ?? []),
  ];

  // Baseline.
  for (const field of ["hostNetwork", "hostPID", "hostIPC"] as const) {
    if (pod[field] === true) problems.push(`pod: ${field} is true`);
  }
  if (podContext.windowsOptions?.hostProcess === true) problems.push("pod: hostProcess is true");
  for (const sysctl of podContext.sysctls ?? []) {
    if (!SAFE_SYSCTLS.has(sysctl.name)) problems.push(`pod: sysctl ${sysctl.name} is not safe`);
  }
  for (const [key, value] of Object.entries(template.metadata?.annotations ?? {})) {
    if (
      key.startsWith("container.apparmor.security.beta.kubernetes.io/") &&
      value !== "runtime/default" &&
      !value.startsWith("localhost/")
    ) {
      problems.push(`pod: AppArmor annotation ${key} is ${value}`);
    }
  }
  problems.push(...contextProblems("pod", podContext));
  for (const c of containers) {
    const where = `container ${c.name}`;
    const context = c.securityContext ?? {};
    if (context.windowsOptions?.hostProcess === true)
      problems.push(`${where}: hostProcess is true`);
    if (context.privileged === true) problems.push(`${where}: privileged`);
    if (context.procMount !== undefined && context.procMount !== "Default") {
      problems.push(`${where}: procMount is ${context.procMount}`);
    }
    for (const port of c.ports ?? []) {
      if (port.hostPort !== undefined && port.hostPort !== 0) {
        problems.push(`${where}: hostPort ${port.hostPort}`);
      }
    }
    const handlers = {
      livenessProbe: c.livenessProbe,
      readinessProbe: c.readinessProbe,
      startupProbe: c.startupProbe,
      postStart: c.lifecycle?.postStart,
      preStop: c.lifecycle?.preStop,
    };
    for (const [name, handler] of Object.entries(handlers)) {
      if (handler?.httpGet?.host !== undefined || handler?.tcpSocket?.host !== undefined) {
        problems.push(`${where}: ${name} sets a host`);
      }
    }
    problems.push(...contextProblems(where, context));
  }

  // Restricted.
  for (const volume of pod.volumes ?? []) {
    const types = Object.keys(volume).filter((k) => k !== "name");
    const other = types.filter((t) => !VOLUME_TYPES.has(t));
    if (other.length > 0) problems.push(`volume ${volume.name}: type ${other.join(", ")}`);
  }
  for (const c of containers) {
    const where = `container ${c.name}`;
    const context = c.securityContext ?? {};
    if (context.allowPrivilegeEscalation !== false) {
      problems.push(`${where}: allowPrivilegeEscalation is not false`);
    }
    const nonRoot = context.runAsNonRoot ?? podContext.runAsNonRoot;
    if (nonRoot !== true) problems.push(`${where}: runAsNonRoot is not true (pod or container)`);
    const seccomp = context.seccompProfile?.type ?? podContext.seccompProfile?.type;
    if (seccomp === undefined || !SECCOMP_TYPES.has(seccomp)) {
      problems.push(`${where}: seccompProfile is ${seccomp ?? "unset"} (pod or container)`);
    }
    if (!(context.capabilities?.drop ?? []).includes("ALL")) {
      problems.push(`${where}: capabilities.drop lacks ALL`);
    }
    for (const cap of context.capabilities?.add ?? []) {
      if (cap !== "NET_BIND_SERVICE") problems.push(`${where}: adds capability ${cap}`);
    }
  }
  return problems;
}

/** The checks that apply alike to the pod's security context and each container's. */
function contextProblems(where: string, context: SecurityContext): string[] {
  const problems: string[] = [];
  if (context.runAsNonRoot === false) problems.push(`${where}: runAsNonRoot is false`);
  if (context.runAsUser === 0) problems.push(`${where}: runAsUser is 0`);
  if (context.seccompProfile?.type === "Unconfined") {
    problems.push(`${where}: seccompProfile is Unconfined`);
  }
  const appArmor = context.appArmorProfile?.type;
  if (appArmor !== undefined && appArmor !== "RuntimeDefault" && appArmor !== "Localhost") {
    problems.push(`${where}: appArmorProfile is ${appArmor}`);
  }
  const seLinux = context.seLinuxOptions;
  if (seLinux !== undefined) {
    if (!SELINUX_TYPES.has(seLinux.type ?? "")) {
      problems.push(`${where}: seLinuxOptions.type is ${seLinux.type}`);
    }
    if (seLinux.user !== undefined) problems.push(`${where}: seLinuxOptions.user is set`);
    if (seLinux.role !== undefined) problems.push(`${where}: seLinuxOptions.role is set`);
  }
  return problems;
}
