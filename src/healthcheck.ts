/**
 * The container's health check (`node dist/healthcheck.js`): GET /healthz on the address the
 * exporter listens on, from `PGCP_LISTEN` (default `:9642`; an address of every interface is
 * asked on loopback). Exits 0 when it answers 200, 1 otherwise, within 4 seconds. A listen
 * address set only in a configuration file must also be given as `PGCP_LISTEN` for it.
 */
import { parseListen } from "./server/http-server.js";

export function healthUrl(listen: string): string {
  const { host, port } = parseListen(listen);
  const local = host === undefined || host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return `http://${local.includes(":") ? `[${local}]` : local}:${port}/healthz`;
}

const listen =
  process.env.PGCP_LISTEN === undefined || process.env.PGCP_LISTEN === ""
    ? ":9642"
    : process.env.PGCP_LISTEN;
try {
  const answer = await fetch(healthUrl(listen), { signal: AbortSignal.timeout(4000) });
  process.exitCode = answer.ok ? 0 : 1;
} catch {
  process.exitCode = 1;
}
