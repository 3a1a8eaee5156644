/**
 * The demo's alert receiver: a webhook endpoint on loopback that verifies each request's
 * signature, validates the body, answers 200, and prints one line per alert for a person.
 */
import { randomBytes, timingSafeEqual } from "node:crypto";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { signature, WEBHOOK_HEADERS, webhookPayloadSchema } from "../alerts/sinks/index.js";

export interface AlertPrinter {
  readonly url: string;
  /** The signing secret the exporter must use (random per demo). */
  readonly secret: string;
  close(): Promise<void>;
}

const MARK: Record<string, string> = {
  operation_failed: "FAILED   ",
  operation_stuck: "STUCK    ",
  operation_retrying: "RETRYING ",
  operation_recovered: "RECOVERED",
  compute_advice: "ADVICE   ",
  platform_incident: "INCIDENT ",
};

export async function startAlertPrinter(
  print: (line: string) => void,
  onAlert: (kind: string) => void = () => undefined,
): Promise<AlertPrinter> {
  const secret = randomBytes(24).toString("hex");
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks).toString("utf8");
      const timestamp = Number(req.headers[WEBHOOK_HEADERS.timestamp]);
      const given = Buffer.from(String(req.headers[WEBHOOK_HEADERS.signature] ?? ""));
      const expected = Buffer.from(signature(secret, timestamp, body));
      if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
        res.writeHead(401).end("bad signature\n");
        return;
      }
      let parsed;
      try {
        parsed = webhookPayloadSchema.safeParse(JSON.parse(body));
      } catch {
        parsed = undefined;
      }
      if (parsed?.success !== true) {
        res.writeHead(400).end("bad body\n");
        return;
      }
      for (const a of parsed.data.alerts) {
        onAlert(a.kind);
        if (a.incident !== null) {
          const i = a.incident;
          print(
            `alert ${MARK[a.kind] ?? a.kind} ${i.incident_id} ${i.state}: ${a.action} in ${i.region_id} across ${i.project_count} projects (failures ${a.failures_count})  "${i.error_class}"`,
          );
          continue;
        }
        if (a.advice !== null) {
          print(`alert ${MARK[a.kind] ?? a.kind} ${a.project_id} ${a.advice.summary}`);
          continue;
        }
        const error = a.error === null ? "" : `  "${a.error}"`;
        print(
          `alert ${MARK[a.kind] ?? a.kind} ${a.project_id} ${a.action} ${a.status} (failures ${a.failures_count}, operation ${a.operation_id.slice(0, 8)})${error}`,
        );
      }
      res.writeHead(200, { "content-type": "text/plain" }).end("ok\n");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/alerts`,
    secret,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => {
          resolve();
        });
        server.closeAllConnections();
      }),
  };
}
