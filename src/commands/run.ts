/**
 * `pgcp-exporter run`: the exporter daemon. Loads the configuration (file, environment, flags),
 * starts the exporter (`exporter/`), reloads the configuration on SIGHUP, and on SIGTERM/SIGINT
 * stops polling (a poll in flight is abandoned without a commit), closes the server and exits
 * 0. It exits 1 when the exporter cannot start or can no longer do its job.
 */
import {
  setDaemonV8Flags,
  startExporter,
  startMemorySaver,
  type RunningExporter,
} from "../exporter/index.js";
import type { Config } from "../config/index.js";
import { createLogger, errorFields } from "../logger.js";
import { stateDirectoryProblem } from "../store/index.js";
import type { Command } from "./command.js";
import { CONFIG_FLAGS_HELP, loadFromArgs } from "./config-flags.js";

const HELP = `usage: pgcp-exporter run [options]

Watches the operations log of each configured project, serves Prometheus metrics and the
status page, and sends failure alerts to the configured sinks. SIGHUP reloads the
configuration: projects, sinks and routing, alert rules, stuck thresholds, the log level and
the web configuration apply at once; other changed settings are named in the log and wait for
a restart. A configuration that is not valid is refused and the running one kept.

Memory settings (node flags, environment) and how to change them: docs/performance.md#memory

options:
${CONFIG_FLAGS_HELP}`;

export const runCommand: Command = {
  async run(argv) {
    const loaded = await loadFromArgs("run", HELP, argv);
    if (loaded.kind === "exit") return loaded.code;
    const { config, sinks, web, otlp } = loaded;
    // A state directory that cannot be written would leave a process that looks alive and
    // commits nothing: it is refused before anything starts (check-config checks it too).
    const stateProblem = await unwritableStateDirectory(config);
    if (stateProblem !== undefined) {
      process.stderr.write(`pgcp-exporter run: ${stateProblem}\n`);
      return 1;
    }
    const logger = createLogger(config.log.level, undefined, config.log.format);
    const v8Flags = setDaemonV8Flags();
    const saver = startMemorySaver({
      onSwitch: (saving, eventLoopUtilization) => {
        logger.debug({ saving, eventLoopUtilization }, "V8 memory saver mode switched");
      },
    });
    logger.debug({ v8Flags, memorySaver: saver.choice }, "V8 flags");
    let exporter: RunningExporter;
    try {
      exporter = await startExporter(config, { logger, sinks, web, otlp });
    } catch (error) {
      saver.stop();
      logger.fatal(errorFields(error), "exporter could not start");
      return 1;
    }
    // Runs until a signal, or until the daemon can no longer do its job.
    const failure = await new Promise<Error | undefined>((resolve) => {
      const done = (error: Error | undefined) => {
        process.off("SIGTERM", onSignal);
        process.off("SIGINT", onSignal);
        process.off("SIGHUP", onHangup);
        resolve(error);
      };
      const onHangup = () => {
        logger.info({ signal: "SIGHUP" }, "reloading the configuration");
        void exporter.reload(loaded.reload);
      };
      const onSignal = (signal: NodeJS.Signals) => {
        logger.info({ signal }, "shutting down");
        done(undefined);
      };
      process.on("SIGTERM", onSignal);
      process.on("SIGINT", onSignal);
      process.on("SIGHUP", onHangup);
      void exporter.daemon.failed.then(done);
    });
    saver.stop();
    if (failure !== undefined) {
      logger.fatal(errorFields(failure), "exporter cannot go on; stopping");
      await exporter.stop();
      return 1;
    }
    await exporter.stop();
    logger.info("stopped");
    return 0;
  },
};

/** Why the file store's directory cannot be used (made if missing), or undefined. */
async function unwritableStateDirectory(config: Config): Promise<string | undefined> {
  if (config.state.url !== undefined) return undefined;
  return stateDirectoryProblem(config.state.dir, { keep: true });
}
