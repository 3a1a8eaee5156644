/**
 * A real Prometheus server for end-to-end tests (Debian's `prometheus` package): loopback only,
 * a free port, a temporary TSDB, one static scrape job; and a small client of its HTTP API.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { tempDir } from "./exporter.js";
import { startServerProcess, type ServerProcess } from "./server-process.js";

/** One scrape job: its targets, and how to reach them when they ask for TLS or a login. */
export interface ScrapeJob {
  readonly job: string;
  /** `host:port` of each target of the job. */
  readonly targets: readonly string[];
  /** HTTPS, trusting the certificates of this file. */
  readonly caFile?: string;
  readonly basicAuth?: { readonly username: string; readonly password: string };
}

export interface PrometheusOptions extends ScrapeJob {
  readonly scrapeIntervalSeconds: number;
  /** More jobs, with the same interval. */
  readonly extraJobs?: readonly ScrapeJob[];
}

/** One series of a query answer: its labels and its samples as [seconds, value]. */
export interface Series {
  readonly metric: Readonly<Record<string, string>>;
  /** Instant vectors: one sample. */
  readonly value?: readonly [number, string];
  /** Range vectors: every sample in the range. */
  readonly values?: readonly (readonly [number, string])[];
}

export interface RunningPrometheus {
  readonly url: string;
  /** `GET /api/v1/query`; `time` is sent as given (seconds, as Prometheus wrote it). */
  query(expr: string, time?: string): Promise<Series[]>;
  /** Everything Prometheus wrote, for failure messages. */
  output(): string;
  /** SIGTERM, waits for the exit, removes the temporary directory. */
  stop(): Promise<void>;
}

function configYaml(options: PrometheusOptions): string {
  const interval = `${options.scrapeIntervalSeconds}s`;
  return [
    "global:",
    `  scrape_interval: ${interval}`,
    `  scrape_timeout: ${interval}`,
    "scrape_configs:",
    ...[options, ...(options.extraJobs ?? [])].flatMap(jobYaml),
    "",
  ].join("\n");
}

function jobYaml(job: ScrapeJob): string[] {
  const lines = [
    `  - job_name: ${JSON.stringify(job.job)}`,
    "    static_configs:",
    `      - targets: [${job.targets.map((t) => JSON.stringify(t)).join(", ")}]`,
  ];
  if (job.caFile !== undefined) {
    lines.push(
      "    scheme: https",
      "    tls_config:",
      `      ca_file: ${JSON.stringify(job.caFile)}`,
    );
  }
  if (job.basicAuth !== undefined) {
    lines.push(
      "    basic_auth:",
      `      username: ${JSON.stringify(job.basicAuth.username)}`,
      `      password: ${JSON.stringify(job.basicAuth.password)}`,
    );
  }
  return lines;
}

/** Starts Prometheus and waits until it is ready; a port taken meanwhile is tried again. */
export async function startPrometheus(
  binary: string,
  options: PrometheusOptions,
): Promise<RunningPrometheus> {
  const dir = await tempDir("pgcp-e2e-prometheus-");
  const configFile = path.join(dir.dir, "prometheus.yml");
  let server: ServerProcess;
  try {
    await writeFile(configFile, configYaml(options));
    server = await startServerProcess({
      name: "Prometheus",
      binary,
      readyPath: "/-/ready",
      args: (port) => [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${path.join(dir.dir, "data")}`,
        `--web.listen-address=127.0.0.1:${String(port)}`,
        "--log.level=warn",
      ],
    });
  } catch (error) {
    await dir.remove();
    throw error;
  }
  const { url } = server;
  return {
    url,
    query: (expr, time) => query(url, expr, time),
    output: () => server.output(),
    async stop() {
      await server.stop();
      await dir.remove();
    },
  };
}

interface QueryAnswer {
  readonly status: string;
  readonly error?: string;
  readonly data?: { readonly resultType: string; readonly result: Series[] | [number, string] };
}

async function query(url: string, expr: string, time?: string): Promise<Series[]> {
  const params = new URLSearchParams({ query: expr });
  if (time !== undefined) params.set("time", time);
  const response = await fetch(`${url}/api/v1/query?${params.toString()}`);
  const answer = (await response.json()) as QueryAnswer;
  if (answer.status !== "success" || answer.data === undefined) {
    throw new Error(`query ${expr} failed: ${answer.error ?? response.status}`);
  }
  const { resultType, result } = answer.data;
  if (resultType !== "vector" && resultType !== "matrix") {
    throw new Error(`query ${expr}: unexpected result type ${resultType}`);
  }
  return result as Series[];
}
