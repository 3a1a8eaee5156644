/**
 * What `run` and `check-config` (the built command) print when something is wrong before they
 * start: a mistyped flag in one line and where to read the usage, every configuration problem
 * at once (the web configuration's files and the state directory included), and a state
 * directory that cannot be written refused by `run` in one line with exit 1. Running as root,
 * a chmod'ed directory is still writable: the unwritable state directory here is a path
 * through a regular file (ENOTDIR).
 */
import { readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../support/run-cli.js";
import { tempDir } from "../support/temp-dir.js";

const ENV = { PGCP_API_KEY: "k", PGCP_PROJECTS: "alpha-1" };

let dir: string;
/** A state directory no one can make: its parent is a regular file. */
let unwritable: string;

beforeAll(async () => {
  dir = await tempDir("pgcp-cli-errors-");
  await writeFile(path.join(dir, "file"), "");
  unwritable = path.join(dir, "file", "state");
});

describe("a mistyped flag", () => {
  it.each([
    [
      ["run", "--projecs", "all"],
      "pgcp-exporter run: unknown option --projecs; did you mean --projects?",
      "run",
    ],
    [
      ["check-config", "--state-dir"],
      "pgcp-exporter check-config: --state-dir needs a value",
      "check-config",
    ],
    [
      ["check-config", "--connect=yes"],
      "pgcp-exporter check-config: --connect takes no value",
      "check-config",
    ],
  ])("%j gives one line and where to read more", async (args, line, command) => {
    const run = await runCli(args, ENV);
    expect(run.code).toBe(2);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(`${line}\nrun \`pgcp-exporter ${command} --help\` for usage\n`);
  });

  it("as a command, suggests the command it is closest to", async () => {
    const run = await runCli(["chek-config"]);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      'pgcp-exporter: unknown command "chek-config"; did you mean check-config?\n' +
        "run `pgcp-exporter --help` for the commands\n",
    );
  });
});

describe("every problem at once", () => {
  it("lists the configuration's, the web configuration's and the state directory's", async () => {
    const web = path.join(dir, "web.yml");
    const cert = path.join(dir, "missing.crt");
    const key = path.join(dir, "missing.key");
    await writeFile(web, `tls_server_config:\n  cert_file: ${cert}\n  key_file: ${key}\n`);
    const config = path.join(dir, "config.yaml");
    await writeFile(config, "poll:\n  intervall: 5\nlisten: 9700\n");
    const args = ["--config", config, "--web.config.file", web, "--state-dir", unwritable];
    const check = await runCli(["check-config", ...args], ENV);
    expect(check.code).toBe(2);
    expect(check.stderr).toBe(
      [
        `pgcp-exporter: invalid configuration (${config}):`,
        `  - listen: must be a string "host:port", for example "0.0.0.0:9700" (from the file ${config})`,
        `  - poll.intervall: unknown setting; did you mean poll.interval? (from the file ${config})`,
        `  - state.dir: the state directory ${unwritable} cannot be written: ENOTDIR: not a directory, mkdir '${unwritable}'`,
        `invalid configuration (web configuration ${web}):`,
        `  - tls_server_config.cert_file: cannot read ${cert} (ENOENT)`,
        `  - tls_server_config.key_file: cannot read ${key} (ENOENT)`,
        "",
      ].join("\n"),
    );
    // run refuses the same configuration in the same words (the state directory aside: run
    // checks it once the configuration is valid).
    const run = await runCli(["run", ...args], ENV);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`tls_server_config.cert_file: cannot read ${cert} (ENOENT)`);
    expect(run.stderr).toContain("poll.intervall: unknown setting; did you mean poll.interval?");
  });

  it("shows a YAML syntax error's line and column with the line itself", async () => {
    const config = path.join(dir, "broken.yaml");
    await writeFile(config, "projects: all\npoll:\n  interval: 5\n fastInterval: 2\n");
    const run = await runCli(["check-config", "--config", config], ENV);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(
      [
        "  - not valid YAML at line 4, column 1: all mapping items must start at the same column",
        "      4 |  fastInterval: 2",
        "        | ^",
      ].join("\n"),
    );
  });
});

describe("secrets from files", () => {
  it("reads a configured sink's secret from its default variable's _FILE once", async () => {
    const hook = path.join(dir, "webhook-url");
    await writeFile(hook, "http://127.0.0.1:9/hooks/secret-path\n");
    const config = path.join(dir, "sinks.yaml");
    await writeFile(config, "sinks:\n  - name: hooks\n    kind: webhook\n");
    const run = await runCli(["check-config", "--config", config], {
      ...ENV,
      PGCP_WEBHOOK_URL_FILE: hook,
    });
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain("sinks:     hooks (webhook)");
  });

  it("names a secret file that cannot be read once, not also the setting it leaves unset", async () => {
    const missing = path.join(dir, "no-key");
    const run = await runCli(["check-config", "--listen", "9700"], {
      PGCP_PROJECTS: "alpha-1",
      PGCP_API_KEY_FILE: missing,
    });
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`PGCP_API_KEY_FILE: cannot read ${missing} (ENOENT)`);
    expect(run.stderr).toContain('listen: must be "host:port" or ":port"');
    expect(run.stderr).not.toContain("api.key");
  });
});

describe("the state directory", () => {
  it("that cannot be written makes run exit 1 with one line", async () => {
    const run = await runCli(["run", "--state-dir", unwritable, "--listen", "127.0.0.1:0"], ENV);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe("");
    expect(run.stderr).toBe(
      `pgcp-exporter run: the state directory ${unwritable} cannot be written: ENOTDIR: not a directory, mkdir '${unwritable}'\n`,
    );
  });

  it("that can be made passes check-config, which leaves nothing behind", async () => {
    const base = await tempDir("pgcp-cli-state-");
    const state = path.join(base, "not", "yet", "state");
    const run = await runCli(["check-config", "--state-dir", state], ENV);
    expect(run.stderr).toBe("");
    expect(run.code).toBe(0);
    expect(run.stdout).toContain(`state:     ${state} (files)`);
    expect(await readdir(base)).toEqual([]);
  });
});
