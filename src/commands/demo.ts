/**
 * `pgcp-exporter demo`: the whole thing with no account. Starts a simulator with live traffic
 * (failures included), the exporter against it, and a local webhook receiver that prints the
 * alerts in the terminal; prints where to look, and stops cleanly on Ctrl-C. State goes to a
 * temporary directory, so every demo starts afresh.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { ConfigError, resolveConfig } from "../config/index.js";
import { startSimulator } from "../simulator/index.js";
import { startAlertPrinter } from "./alert-printer.js";
import { startExporter } from "./run.js";
import type { Command } from "./index.js";

const HELP = `usage: pgcp-exporter demo [options]

Runs a simulated control plane with live traffic and the exporter against it.

options:
  --listen ADDR     address of the exporter's HTTP server (env PGCP_LISTEN; default
                    127.0.0.1:9642)
  --projects N      simulated projects (default 5)
  --seed S          seed of the simulated traffic (default 1)
  --log-level L     exporter log level (default info)`;

const DEMO_KEY = "demo-key";

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === "" ? undefined : value;
}

export const demoCommand: Command = {
  name: "demo",
  summary: "run a simulator with live traffic and the exporter against it",
  async run(argv) {
    let values;
    try {
      ({ values } = parseArgs({
        args: argv,
        strict: true,
        options: {
          listen: { type: "string" },
          projects: { type: "string" },
          seed: { type: "string" },
          "log-level": { type: "string" },
          help: { type: "boolean", short: "h" },
        },
      }));
    } catch (error) {
      process.stderr.write(`pgcp-exporter demo: ${(error as Error).message}\n\n${HELP}\n`);
      return 2;
    }
    if (values.help === true) {
      process.stdout.write(HELP + "\n");
      return 0;
    }
    const projects = Number(values.projects ?? "5");
    const seed = Number(values.seed ?? "1");
    if (!Number.isInteger(projects) || projects < 1 || projects > 1000) {
      process.stderr.write("pgcp-exporter demo: --projects must be an integer from 1 to 1000\n");
      return 2;
    }
    if (!Number.isInteger(seed) || seed < 0) {
      process.stderr.write("pgcp-exporter demo: --seed must be a non-negative integer\n");
      return 2;
    }

    const simulator = await startSimulator({
      apiKey: DEMO_KEY,
      clock: "real",
      seed,
      traffic: { projects, operationsPerMinute: 20 * projects, failureShare: 0.15 },
    });
    const stateDir = await mkdtemp(path.join(tmpdir(), "pgcp-demo-"));
    let config;
    try {
      config = resolveConfig("demo", [
        {
          api: { url: simulator.apiUrl, key: DEMO_KEY },
          projects: "all",
          discoveryInterval: 10,
          state: { dir: stateDir },
          listen: values.listen ?? nonEmpty(process.env.PGCP_LISTEN) ?? "127.0.0.1:9642",
          poll: { interval: 5, fastInterval: 2, endpointsInterval: 10 },
          log: { level: values["log-level"] ?? "info" },
        },
      ]);
    } catch (error) {
      await simulator.close();
      await rm(stateDir, { recursive: true, force: true });
      if (!(error instanceof ConfigError)) throw error;
      process.stderr.write(`pgcp-exporter demo: ${error.message}\n`);
      return 2;
    }
    const printer = await startAlertPrinter((line) => process.stderr.write(line + "\n"));
    let exporter;
    try {
      exporter = await startExporter(config, {
        env: { PGCP_WEBHOOK_URL: printer.url, PGCP_WEBHOOK_SECRET: printer.secret },
      });
    } catch (error) {
      // Nothing is left behind: not the simulator, the printer, nor the state directory.
      await printer.close();
      await simulator.close();
      await rm(stateDir, { recursive: true, force: true });
      // A port in use says which, and how to choose another (--listen or PGCP_LISTEN).
      process.stderr.write(
        `pgcp-exporter demo: ${error instanceof Error ? error.message : String(error)}\n`,
      );
      return 1;
    }
    process.stderr.write(
      [
        "",
        "pgcp-exporter demo is running:",
        `  status:     ${exporter.server.url}/`,
        `  metrics:    ${exporter.server.url}/metrics`,
        `  health:     ${exporter.server.url}/healthz, ${exporter.server.url}/readyz`,
        `  simulator:  ${simulator.apiUrl} (API key "${DEMO_KEY}")`,
        `  alerts:     printed below as they arrive (a signed webhook to ${printer.url})`,
        `  state:      ${stateDir}`,
        "Press Ctrl-C to stop.",
        "",
      ].join("\n") + "\n",
    );

    await new Promise<void>((resolve) => {
      process.once("SIGINT", () => {
        resolve();
      });
      process.once("SIGTERM", () => {
        resolve();
      });
    });
    await exporter.stop();
    await printer.close();
    await simulator.close();
    await rm(stateDir, { recursive: true, force: true });
    process.stderr.write("demo stopped\n");
    return 0;
  },
};
