/** The name a replica goes by in the lease tables and its logs. */
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";

/** A replica id: the host name (the pod's name on Kubernetes), the pid and a random suffix. */
export function defaultReplicaId(): string {
  const host =
    hostname()
      .replace(/[^A-Za-z0-9._-]/g, "-")
      .slice(0, 60) || "host";
  return `${host}-${String(process.pid)}-${randomBytes(3).toString("hex")}`;
}
