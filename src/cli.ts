#!/usr/bin/env node
/**
 * The `pgcp-exporter` command: parses the command line and hands over to one command module.
 * Each command lives in `src/commands/`; this file only dispatches.
 */
import { runCommand } from "./commands/index.js";

const code = await runCommand(process.argv.slice(2));
if (code !== undefined) process.exitCode = code;
