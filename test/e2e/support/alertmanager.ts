/**
 * A real Alertmanager for end-to-end tests (Debian's `prometheus-alertmanager` package, whose
 * binary is `prometheus-alertmanager`): loopback only, a free port, clustering off, a temporary
 * data directory, and one route that sends every notification, resolved ones too, at once to a
 * webhook receiver of the test. Plus a small client of its API v2 (alerts, silences).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { tempDir } from "./exporter.js";
import { startServerProcess, type ServerProcess } from "./server-process.js";

export const ALERTMANAGER_BINARY = "prometheus-alertmanager";
export const ALERTMANAGER_PACKAGE = "prometheus-alertmanager";

/** An alert as `GET /api/v2/alerts` lists it. */
export interface GettableAlert {
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly startsAt: string;
  readonly endsAt: string;
  readonly generatorURL?: string;
  readonly status: { readonly state: "active" | "suppressed" | "unprocessed" };
}

/** One notification Alertmanager sent to the webhook receiver. */
export interface WebhookNotification {
  readonly status: "firing" | "resolved";
  readonly alerts: readonly {
    readonly status: "firing" | "resolved";
    readonly labels: Readonly<Record<string, string>>;
    readonly annotations: Readonly<Record<string, string>>;
  }[];
}

export interface RunningAlertmanager {
  readonly url: string;
  /** `GET /api/v2/alerts` (active, silenced and inhibited alike). */
  alerts(): Promise<GettableAlert[]>;
  /** `POST /api/v2/silences`: silences alerts whose labels equal `matchers`; the silence id. */
  silence(matchers: Readonly<Record<string, string>>, forMs: number): Promise<string>;
  /** Stops the server (its data directory stays, for `start`). */
  stop(): Promise<void>;
  /** Starts it again on the same address, after `stop`. */
  start(): Promise<void>;
  /** Stops it and removes its data directory. */
  remove(): Promise<void>;
  output(): string;
}

function configYaml(webhookUrl: string): string {
  return [
    "route:",
    "  receiver: test",
    "  group_by: ['...']",
    "  group_wait: 0s",
    "  group_interval: 1s",
    "  repeat_interval: 1h",
    "receivers:",
    "  - name: test",
    "    webhook_configs:",
    `      - url: ${JSON.stringify(webhookUrl)}`,
    "        send_resolved: true",
    "",
  ].join("\n");
}

export async function startAlertmanager(
  binary: string,
  options: { readonly webhookUrl: string },
): Promise<RunningAlertmanager> {
  const dir = await tempDir("pgcp-e2e-alertmanager-");
  const configFile = path.join(dir.dir, "alertmanager.yml");
  await writeFile(configFile, configYaml(options.webhookUrl));
  const run = (port?: number) =>
    startServerProcess({
      name: "Alertmanager",
      binary,
      readyPath: "/-/ready",
      ...(port === undefined ? {} : { port }),
      args: (p) => [
        `--config.file=${configFile}`,
        `--storage.path=${path.join(dir.dir, "data")}`,
        `--web.listen-address=127.0.0.1:${String(p)}`,
        // No gossip: each test's Alertmanager stands alone, as two peers do when tested apart.
        "--cluster.listen-address=",
        "--log.level=warn",
      ],
    });
  let server: ServerProcess | undefined = await run();
  const { url, port } = server;
  let earlier = "";
  return {
    url,
    async alerts() {
      const response = await fetch(`${url}/api/v2/alerts`);
      if (response.status !== 200) throw new Error(`GET /api/v2/alerts: ${response.status}`);
      return (await response.json()) as GettableAlert[];
    },
    async silence(matchers, forMs) {
      const now = Date.now();
      const response = await fetch(`${url}/api/v2/silences`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          matchers: Object.entries(matchers).map(([name, value]) => ({
            name,
            value,
            isRegex: false,
            isEqual: true,
          })),
          startsAt: new Date(now - 1000).toISOString(),
          endsAt: new Date(now + forMs).toISOString(),
          createdBy: "pgcp-exporter tests",
          comment: "a silence made by a test",
        }),
      });
      if (response.status !== 200) {
        throw new Error(`POST /api/v2/silences: ${response.status} ${await response.text()}`);
      }
      return ((await response.json()) as { silenceID: string }).silenceID;
    },
    async stop() {
      earlier += server?.output() ?? "";
      await server?.stop();
      server = undefined;
    },
    async start() {
      server ??= await run(port);
    },
    async remove() {
      await server?.stop();
      server = undefined;
      await dir.remove();
    },
    output: () => earlier + (server?.output() ?? ""),
  };
}
