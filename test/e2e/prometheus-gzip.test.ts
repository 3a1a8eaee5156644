/**
 * A real Prometheus (Debian's `prometheus` package) asks for gzip by default: its scrapes of
 * `/metrics` get the gzip form, and what it stores is what the plain body says. Prometheus
 * scrapes the exporter through a loopback relay that passes every request and answer through
 * unchanged and notes the `Accept-Encoding` asked for and the `Content-Encoding` given.
 */
import { createServer, request, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { findBinary, requireBinary } from "./support/binaries.js";
import {
  parseSamples,
  scrape,
  startTestExporter,
  tempDir,
  waitFor,
  type TestExporter,
} from "./support/exporter.js";
import { startPrometheus, type RunningPrometheus } from "./support/prometheus.js";

const JOB = "pgcp-gzip";

interface Relayed {
  readonly acceptEncoding: string | undefined;
  readonly contentEncoding: string | undefined;
}

/** A relay to `target` (`host:port`) that notes each request's and answer's encodings. */
async function startRelay(
  target: string,
): Promise<{ server: Server; port: number; seen: Relayed[] }> {
  const seen: Relayed[] = [];
  const server = createServer((req, res) => {
    const upstream = request(
      `http://${target}${req.url ?? "/"}`,
      { method: req.method, headers: req.headers },
      (answer) => {
        if (req.url === "/metrics") {
          seen.push({
            acceptEncoding: req.headers["accept-encoding"],
            contentEncoding: answer.headers["content-encoding"],
          });
        }
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.writeHead(502).end());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { server, port: (server.address() as AddressInfo).port, seen };
}

const prometheusBinary = findBinary("prometheus");

let t: TestSimulator | undefined;
let exporter: TestExporter | undefined;
let relay: Awaited<ReturnType<typeof startRelay>> | undefined;
let prometheus: RunningPrometheus | undefined;
let state: { dir: string; remove(): Promise<void> } | undefined;
let project: string;

beforeAll(async () => {
  if (prometheusBinary === undefined) return;
  t = await startTestSimulator();
  project = (await t.sim.createProject({ plan: "paid", availability_checks: false })).project.id;
  state = await tempDir("pgcp-e2e-gzip-state-");
  exporter = await startTestExporter(t, {
    projects: [project],
    state: { dir: state.dir },
    poll: { interval: 1, fastInterval: 1, endpointsInterval: 0 },
  });
  relay = await startRelay(`127.0.0.1:${exporter.port}`);
  prometheus = await startPrometheus(prometheusBinary, {
    targets: [`127.0.0.1:${relay.port}`],
    job: JOB,
    scrapeIntervalSeconds: 1,
  });
}, 30_000);

afterAll(async () => {
  await prometheus?.stop();
  relay?.server.close();
  relay?.server.closeAllConnections();
  await exporter?.stop();
  await t?.close();
  await state?.remove();
});

describe("Prometheus scraping /metrics in gzip", () => {
  it("asks for gzip, gets it, and stores what the plain body says", async (ctx) => {
    requireBinary("prometheus", (note) => ctx.skip(note));
    const up = `pgcp_project_up{job="${JOB}",project="${project}"}`;
    await waitFor(
      "Prometheus to store the project as up",
      async () => ((await prometheus!.query(up))[0]?.value?.[1] === "1" ? true : undefined),
      { timeoutMs: 20_000 },
    );
    const [stored] = await prometheus!.query(up);
    const served = parseSamples(await scrape(exporter!.url)).find(
      (s) => s.name === "pgcp_project_up" && s.labels.project === project,
    );
    expect(Number(stored?.value?.[1])).toBe(served?.value);

    const scrapes = relay!.seen;
    expect(scrapes.length).toBeGreaterThan(0);
    for (const scraped of scrapes) {
      expect(scraped.acceptEncoding).toContain("gzip");
      expect(scraped.contentEncoding).toBe("gzip");
    }
  });
});
