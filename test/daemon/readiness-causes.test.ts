/**
 * `run` says where the cause is when it cannot do its work, on the real daemon
 * (`node dist/cli.js run`) against the simulator over HTTP:
 * - an account's base URL without `/api/v2` (the API answers 404 at its root) is named once, for
 *   the account and with its URL shown without credentials, not as each of its projects refused;
 *   `/readyz` names it (200 with the problem while the other account's projects are polled as
 *   usual; 503 while nothing could be polled) and the status page shows it; with
 *   `projects: all`, its failed discovery names it too;
 * - an API that answers 404 at its root after the daemon was ready is named in `/readyz`'s 200
 *   answer (an outage does not make a ready exporter unready: that would stop the scrapes that
 *   show it), until the API answers (here: after a reload, which tries at once);
 * - a refused key (401) is named on `/readyz`, which is 200 again once the key is accepted and
 *   the configuration reloaded.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { parseExposition } from "./support.js";
import {
  daemonConfigYaml,
  QUICK_POLL,
  UNTHROTTLED_API,
  type DaemonConfig,
} from "../support/daemon-config.js";
import { DaemonGroup, type DaemonProcess } from "../support/daemon-process.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { tempDir } from "../support/temp-dir.js";
import { sleep, waitForWith } from "../support/wait.js";

const waitFor = waitForWith({ timeoutMs: 20_000, intervalMs: 50 });

let sim: TestSimulator;
const daemons = new DaemonGroup();

beforeAll(async () => {
  sim = await startTestSimulator();
});
afterEach(async () => {
  await daemons.killAll();
});
afterAll(async () => {
  await sim.close();
});

async function projects(count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    ids.push((await sim.sim.createProject({ availability_checks: false })).project.id);
  }
  return ids;
}

/** Writes the configuration file and starts the daemon on it. */
async function start(
  settings: Omit<DaemonConfig, "api" | "state">,
  env: Record<string, string>,
): Promise<{ daemon: DaemonProcess; file: string }> {
  const dir = await tempDir("pgcp-readiness-");
  const file = path.join(dir, "config.yaml");
  await writeFile(
    file,
    daemonConfigYaml({
      api: { url: sim.apiUrl, ...UNTHROTTLED_API, maxAttempts: 1 },
      state: { dir: path.join(dir, "state") },
      poll: { ...QUICK_POLL, jitter: 0 },
      log: { level: "info", format: "json" },
      ...settings,
    }),
  );
  const daemon = daemons.spawn(file, { env });
  await Promise.race([
    daemon.started,
    daemon.exited.then(() => Promise.reject(new Error(daemon.tail()))),
  ]);
  return { daemon, file };
}

async function get(daemon: DaemonProcess, pathname: string) {
  const response = await fetch(`${await daemon.url}${pathname}`);
  return { status: response.status, text: await response.text() };
}

/** Waits until `/readyz` answers `status` with a body that holds `cause`; returns the body. */
function readyz(daemon: DaemonProcess, status: number, cause = ""): Promise<string> {
  return waitFor(`/readyz to answer ${status} ${cause}`, async () => {
    const answer = await get(daemon, "/readyz");
    return answer.status === status && answer.text.includes(cause) ? answer.text : undefined;
  });
}

/** Waits until `/readyz` answers 200 with no problem named (`OK`); returns the body. */
function readyWithoutProblems(daemon: DaemonProcess): Promise<string> {
  return waitFor("/readyz to answer 200 OK, naming no problem", async () => {
    const answer = await get(daemon, "/readyz");
    return answer.status === 200 && answer.text === "OK\n" ? answer.text : undefined;
  });
}

/** Sends SIGHUP and waits for the reload's line. */
async function reload(daemon: DaemonProcess): Promise<void> {
  const done = (l: Record<string, unknown>) => l.msg === "configuration reloaded";
  const before = daemon.logs.filter(done).length;
  daemon.child.kill("SIGHUP");
  await waitFor("the reload", () => daemon.logs.filter(done).length > before || undefined);
}

/** The value of a sample on the daemon's `/metrics`. */
async function metric(daemon: DaemonProcess, name: string, labels: Record<string, string>) {
  const samples = parseExposition((await get(daemon, "/metrics")).text);
  return samples.find(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  )?.value;
}

const WRONG_URL_LINE = /the API answers 404 at its root: the base URL is probably wrong/;

describe("a base URL that answers 404 at the API's root", () => {
  it("is named once for its account, on /readyz and on the status page", async () => {
    const [good, ...typoed] = (await projects(3)) as [string, string, string];
    // The simulator's address without /api/v2, with credentials that must never be shown.
    const root = new URL(sim.url);
    const wrongUrl = `http://someone:url-secret-7741@${root.host}`;
    const shown = `http://${root.host}/`;
    const { daemon } = await start(
      {
        accounts: [
          { name: "good", keyEnv: "KEY_GOOD", url: sim.apiUrl, projects: [good] },
          { name: "typo", keyEnv: "KEY_TYPO", url: wrongUrl, projects: typoed },
        ],
      },
      { KEY_GOOD: sim.apiKey, KEY_TYPO: sim.apiKey },
    );

    const line = await daemon.waitForLog("the wrong base URL", (l) =>
      WRONG_URL_LINE.test(String(l.msg)),
    );
    expect(line).toMatchObject({ level: "error", account: "typo", url: shown, status: 404 });
    expect(String(line.msg)).toContain("it should end in /api/v2");
    // Ready: the good account's project is polled; the problem is named all the same.
    const body = await readyz(daemon, 200, "typo");
    expect(body).toBe(
      "OK, but: the base URL of account typo looks wrong (404 at the API root; it should end in /api/v2)\n",
    );

    // The projects are polled again with backoff, and none of those polls adds a line.
    const refused = () =>
      metric(daemon, "pgcp_api_requests_total", { route: "listOperations", code: "404" });
    const before = (await refused()) ?? 0;
    await sleep(3000);
    expect(await refused()).toBeGreaterThan(before);
    expect(daemon.logs.filter((l) => WRONG_URL_LINE.test(String(l.msg)))).toHaveLength(1);
    expect(daemon.logs.filter((l) => /refuses the project/.test(String(l.msg)))).toEqual([]);
    expect(daemon.child.exitCode).toBeNull();

    const page = (await get(daemon, "/")).text;
    expect(page).toMatch(
      /class="banner wrong-base-url" data-account="typo">The API answers 404 at its root for the account typo since/,
    );
    expect(page).toContain(`<code>${shown}</code>`);
    expect(page).toContain("looks wrong (404 at the API root");
    expect(page).not.toMatch(/data-account="good">The API answers 404/);

    // The other account is polled as usual.
    const up = (id: string) => metric(daemon, "pgcp_project_up", { project: id });
    expect(await up(good)).toBe(1);
    for (const id of typoed) expect(await up(id)).toBe(0);

    for (const text of [daemon.text(), body, page]) {
      expect(text).not.toContain("url-secret-7741");
      expect(text).not.toContain("someone");
      expect(text).not.toContain(sim.apiKey);
    }
  }, 40_000);

  it("is named when the projects are discovered (`all`), where the listing answers 404", async () => {
    const root = new URL(sim.url);
    const { daemon } = await start(
      {
        api: { url: `http://${root.host}`, maxAttempts: 1 },
        projects: "all",
        discoveryInterval: 0.5,
      },
      { PGCP_API_KEY: sim.apiKey },
    );
    const line = await daemon.waitForLog("the wrong base URL", (l) =>
      WRONG_URL_LINE.test(String(l.msg)),
    );
    expect(line).toMatchObject({ level: "error", account: "default", url: `http://${root.host}/` });
    expect(await readyz(daemon, 503, "default")).toBe(
      "not ready: the base URL of account default looks wrong (404 at the API root; it should end in /api/v2)\n",
    );
    // Discovery is tried again (and fails) every half second; the line is not repeated.
    const failed = (l: Record<string, unknown>) => /project discovery failed/.test(String(l.msg));
    await waitFor(
      "three failed discoveries",
      () => daemon.logs.filter(failed).length >= 3 || undefined,
    );
    expect(daemon.logs.filter((l) => WRONG_URL_LINE.test(String(l.msg)))).toHaveLength(1);
  }, 40_000);

  it("is named by a ready daemon's /readyz, which stays ready, until the API answers", async () => {
    const ids = await projects(2);
    const { daemon } = await start({ projects: ids }, { PGCP_API_KEY: sim.apiKey });
    expect(await readyWithoutProblems(daemon)).toBe("OK\n");

    // The API answers 404 to everything (a proxy in front of it misroutes, say).
    await sim.sim.addFault({ kind: "status", status: 404 });
    try {
      await readyz(daemon, 200, "the base URL of account default looks wrong (404 at the API root");
    } finally {
      await sim.sim.clearFaults();
    }
    // A reload tries what was refused at once (else the backoff's next try does).
    await reload(daemon);
    expect(await readyWithoutProblems(daemon)).toBe("OK\n");
    const said = daemon.logs.filter((l) => l.level === "error" || l.level === "warn");
    expect(said.map((l) => [l.msg, l.account])).toEqual([
      [expect.stringMatching(WRONG_URL_LINE), "default"],
    ]);
    await daemon.waitForLog("the base URL answering again", (l) =>
      /the API answers at the account's base URL again/.test(String(l.msg)),
    );
  }, 40_000);
});

describe("a refused key (401)", () => {
  it("is named on /readyz, which is ready again once the key is accepted and the configuration reloaded", async () => {
    const ids = await projects(2);
    const key = `new-key-${String(Math.random()).slice(2)}`;
    const { daemon } = await start({ projects: ids }, { PGCP_API_KEY: key });
    const body = await readyz(daemon, 503, "refused");
    expect(body).toBe("not ready: the API key is refused (401) for account default\n");
    const page = (await get(daemon, "/")).text;
    expect(page).toContain("the API key is refused (401) for account default");

    // The key is given access; the reload tries it at once (else one probe in minutes does).
    await sim.sim.createApiKey({ key, user: "sim-owner" });
    await reload(daemon);
    expect(await readyWithoutProblems(daemon)).toBe("OK\n");
    expect(daemon.text()).not.toContain(key);
  }, 40_000);
});
