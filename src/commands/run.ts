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
import { createLogger, errorFields } from "../logger.js";
import type { Command } from "./command.js";
import { CONFIG_FLAGS_HELP, loadFromArgs } from "./config-flags.js";

const HELP = `usage: pgcp-exporter run [options]

Watches the operations log of each configured project, serves Prometheus metrics and the
status page, and sends failure alerts to the configured sinks. SIGHUP reloads the
configuration: projects, sinks and routing, alert rules, stuck thresholds, the log level and
the web configuration apply at once; other changed settings are named in the log and wait for
a restart. A configuration that is not valid is refused and the running one kept.

Memory: the heap may grow by 50% of what it holds before a full collection (V8's
--heap-growing-percent=50), and the HTTP client's WebAssembly parser is compiled by V8's
baseline compiler only (--liftoff-only), unless node is started with either flag of its own.
Node 24 takes --liftoff-only only at its start. Start node as the image does: with
--max-semi-space-size=8 --liftoff-only, for a young generation of 16 MiB instead of up to 32
and the parser compiled once, and with MALLOC_ARENA_MAX=2 MALLOC_MMAP_THRESHOLD_=131072 in
the environment, for two allocator arenas instead of one per busy thread and large blocks given
back when freed. On Node 24, V8's memory saver mode is on while the event loop has time to
spare and off while it is busy (a catch-up), unless node is started with --memory-saver-mode or
--no-memory-saver-mode (docs/performance.md).

options:
${CONFIG_FLAGS_HELP}`;

export const runCommand: Command = {
  async run(argv) {
    const loaded = await loadFromArgs("run", HELP, argv);
    if (loaded.kind === "exit") return loaded.code;
    const { config, sinks, web } = loaded;
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
      exporter = await startExporter(config, { logger, sinks, web });
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
