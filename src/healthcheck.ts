/**
 * The container's health check (`node dist/healthcheck.js`): GET /healthz on the address the
 * exporter listens on, from `PGCP_LISTEN` (default `:9642`; an address of every interface is
 * asked on loopback). Exits 0 when it answers, 1 otherwise, within 4 seconds. A listen address
 * set only in a configuration file must also be given as `PGCP_LISTEN` for it.
 *
 * With `PGCP_WEB_CONFIG_FILE` naming a web configuration with TLS, it asks over HTTPS (the
 * certificate is not checked: this is the process asking itself on loopback). An answer of 401
 * (basic auth asked for, `web.healthWithoutAuth` off) counts as alive too: only the exporter's
 * own server answers there, and the check holds no password.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { parseListen } from "./server/http-server.js";

export function healthUrl(listen: string, scheme: "http" | "https" = "http"): string {
  const { host, port } = parseListen(listen);
  const local = host === undefined || host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
  return `${scheme}://${local.includes(":") ? `[${local}]` : local}:${port}/healthz`;
}

/** Whether the web configuration file turns TLS on (unreadable: plain HTTP is tried). */
function servesTls(file: string | undefined): boolean {
  if (file === undefined || file === "") return false;
  try {
    const parsed = parseYaml(readFileSync(file, "utf8")) as { tls_server_config?: unknown } | null;
    return typeof parsed?.tls_server_config === "object" && parsed.tls_server_config !== null;
  } catch {
    return false;
  }
}

function ask(url: string): Promise<number> {
  return new Promise((resolve) => {
    const request = url.startsWith("https:") ? httpsRequest : httpRequest;
    const req = request(url, { rejectUnauthorized: false, timeout: 4000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", () => {
      resolve(0);
    });
    req.end();
  });
}

const listen =
  process.env.PGCP_LISTEN === undefined || process.env.PGCP_LISTEN === ""
    ? ":9642"
    : process.env.PGCP_LISTEN;
const scheme = servesTls(process.env.PGCP_WEB_CONFIG_FILE) ? "https" : "http";
const status = await ask(healthUrl(listen, scheme));
process.exitCode = status === 200 || status === 401 ? 0 : 1;
