/**
 * The status page in a real headless browser (Debian's `chromium`, driven by playwright-core):
 * the exporter runs in-process against a test simulator with two webhook sinks pointed at a
 * local receiver (`webhook` answers 500, so its alerts stay pending; `archive` answers 400, so
 * its alerts are dead-lettered). A failed operation is scripted after the first poll; the page
 * must show the project, that failure, the pending alert, the dead letter, working links, a
 * filter form the page's policy lets it send, and none of the secrets (API key, webhook URLs and their tokens, the signing secret).
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { Writable } from "node:stream";
import { chromium, type Browser, type Page, type Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startExporter, type RunningExporter } from "../../src/exporter/index.js";
import { resolveConfig } from "../../src/config/index.js";
import { createLogger } from "../../src/logger.js";
import { startReceiver, type Receiver } from "../support/receiver.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { removeDir, tempDir } from "../support/temp-dir.js";
import { CHROMIUM_ARGS, requireChromium } from "./chromium.js";
import { runsThen } from "../support/operation-steps.js";

const SECRETS = {
  apiKey: "pgcp-status-api-key-SECRET-5d1e90",
  hookPath: "/hooks/STATUSHOOKSECRET77",
  hookToken: "STATUSTOKENSECRET42",
  archivePath: "/archive/ARCHIVESECRET13",
  signing: "s3cret-signing-key",
} as const;

/** From outside: must be shown as text, never interpreted. */
const ERROR_TEXT = `disk quota exceeded <script>document.title="pwned"</script> & "quotes"`;

async function waitFor(what: string, probe: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!probe()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

describe("the status page in a headless browser", () => {
  let sim: TestSimulator;
  let receiver: Receiver;
  let exporter: RunningExporter;
  let browser: Browser | undefined;
  let stateDir: string;
  let shotsDir: string;
  let projectId: string;
  let failedOpId: string;
  let openOpId: string;
  let secretPieces: string[];

  beforeAll(async () => {
    sim = await startTestSimulator({ apiKey: SECRETS.apiKey });
    receiver = await startReceiver({
      fallback: (request) =>
        request.path.startsWith("/archive")
          ? { status: 400, body: "bad request" }
          : { status: 500 },
    });
    const created = await sim.sim.createProject();
    projectId = created.project.id;
    const branchId = created.branches[0]!.id;
    await sim.sim.advance(10);

    stateDir = await tempDir("pgcp-status-state-");
    shotsDir = await tempDir("pgcp-status-shots-");
    const webhookUrl = `${receiver.url}${SECRETS.hookPath}?token=${SECRETS.hookToken}`;
    const archiveUrl = `${receiver.url}${SECRETS.archivePath}`;
    secretPieces = [
      SECRETS.apiKey,
      webhookUrl,
      archiveUrl,
      "STATUSHOOKSECRET77",
      SECRETS.hookToken,
      "ARCHIVESECRET13",
      SECRETS.signing,
      // The receiver's address appears nowhere but in the sinks' URLs.
      new URL(receiver.url).host,
    ];
    const config = resolveConfig("test", [
      {
        listen: "127.0.0.1:0",
        api: { url: sim.apiUrl, key: SECRETS.apiKey, maxAttempts: 1, timeout: 5 },
        projects: [projectId],
        state: { dir: stateDir },
        // The test polls with pollAll(); the scheduler's own polls are an hour apart.
        poll: { interval: 3600, fastInterval: 3600, endpointsInterval: 0, jitter: 0 },
        // The simulator's clock is far behind the exporter's: nothing counts as stuck here.
        stuck: { default: 1e9, actions: {} },
        sinks: [
          { name: "webhook", kind: "webhook", groupWindow: 0 },
          { name: "archive", kind: "webhook", urlEnv: "PGCP_ARCHIVE_URL", groupWindow: 0 },
        ],
        log: { level: "warn" },
      },
    ]);
    const logs = new Writable({
      write(_chunk, _encoding, done) {
        done();
      },
    });
    exporter = await startExporter(config, {
      logger: createLogger("warn", logs),
      env: {
        PGCP_WEBHOOK_URL: webhookUrl,
        PGCP_WEBHOOK_SECRET: SECRETS.signing,
        PGCP_ARCHIVE_URL: archiveUrl,
      },
    });
    await exporter.daemon.pollAll();

    // After the first poll: one operation fails, another stays open.
    await sim.sim.advance(1);
    const failed = await sim.sim.scriptOperation({
      project_id: projectId,
      branch_id: branchId,
      action: "apply_config",
      steps: runsThen("failed", 2, ERROR_TEXT),
    });
    failedOpId = failed.id;
    const open = await sim.sim.scriptOperation({
      project_id: projectId,
      branch_id: branchId,
      action: "create_branch",
      steps: runsThen("finished", 3600),
    });
    openOpId = open.id;
    await sim.sim.advance(5);
    await exporter.daemon.pollAll();

    // The archive refuses the alert for good (dead letter); the webhook keeps failing (pending).
    await waitFor("the alert to be dead-lettered for archive and tried on webhook", () => {
      const s = exporter.daemon.project(projectId)?.state;
      return (
        s?.deadLetters.length === 1 &&
        s.outbox.length === 1 &&
        receiver.requests.some((r) => r.path.startsWith("/hooks"))
      );
    });
  });

  afterAll(async () => {
    await browser?.close();
    await exporter.stop();
    await receiver.close();
    await sim.close();
    await removeDir(stateDir);
    await removeDir(shotsDir);
  });

  async function openStatusPage(
    skip: (note: string) => never,
  ): Promise<{ page: Page; response: Response }> {
    const executablePath = requireChromium(skip);
    browser ??= await chromium.launch({ executablePath, args: [...CHROMIUM_ARGS] });
    const page = await browser.newPage();
    const response = await page.goto(`${exporter.server.url}/`);
    if (response === null) throw new Error("no response for the status page");
    return { page, response };
  }

  it("renders the project, the scripted failure and the outbox", async (ctx) => {
    const { page, response } = await openStatusPage((note) => ctx.skip(note));
    expect(response.status()).toBe(200);
    expect(response.headers()["content-type"]).toBe("text/html; charset=utf-8");
    expect(response.headers()["cache-control"]).toBe("no-store");
    expect(await page.title()).toBe("pgcp-exporter status");
    expect(await page.locator("#readiness").textContent()).toBe("ready");

    const row = page.locator(`tr[data-project="${projectId}"]`);
    expect(await row.isVisible()).toBe(true);
    expect(await row.locator(".project-id").textContent()).toBe(projectId);
    expect(await row.locator(".status .badge").textContent()).toBe("ok");
    expect(await row.locator(".last-poll").textContent()).toMatch(/ago\)$/);

    // The failure: action, status, operation id and the error text, shown as text.
    const failure = row.locator(`li.failure[data-operation="${failedOpId}"]`);
    expect(await failure.isVisible()).toBe(true);
    expect(await failure.locator(".action").textContent()).toBe("apply_config");
    expect(await failure.locator(".op-status").textContent()).toBe("failed");
    expect(await failure.locator("code").textContent()).toBe(failedOpId);
    expect(await failure.locator(".error").textContent()).toBe(ERROR_TEXT);
    expect(await page.locator("script").count()).toBe(0);
    expect(await page.title()).not.toBe("pwned");

    // The operation still open.
    const open = row.locator(`li.operation[data-operation="${openOpId}"]`);
    expect(await open.locator(".action").textContent()).toBe("create_branch");
    expect(await open.locator(".op-status").textContent()).toBe("running");
    expect(await row.locator(".alerts").textContent()).toBe("1 pending · 1 dead-lettered");

    // The outbox by sink name: the webhook's alert pending, the archive's dead-lettered.
    const webhook = page.locator('#outbox tr[data-sink="webhook"]');
    expect(await webhook.locator(".sink-name").textContent()).toBe("webhook");
    expect(await webhook.locator(".pending").textContent()).toBe("1");
    expect(await webhook.locator(".oldest").textContent()).toMatch(/ago\)$/);
    const archive = page.locator('#outbox tr[data-sink="archive"]');
    expect(await archive.locator(".pending").textContent()).toBe("0");
    expect(await archive.locator(".dead").textContent()).toBe("1");
    const dead = page.locator('#dead-letters tr.dead-letter[data-sink="archive"]');
    expect(await dead.locator(".reason").textContent()).toBe("client_error");
    expect(await dead.textContent()).toContain(failedOpId);

    expect(await page.locator("#count-projects b").textContent()).toBe("1");
    expect(await page.locator("#count-pending b").textContent()).toBe("1");
    await page.close();
  });

  it("filters by account with its form, which the page's policy lets it send", async (ctx) => {
    const { page } = await openStatusPage((note) => ctx.skip(note));
    await page.goto(`${exporter.server.url}/?account=nobody`);
    expect(await page.locator(`tr[data-project="${projectId}"]`).count()).toBe(0);
    expect(await page.locator("#filter-unknown-account").isVisible()).toBe(true);
    // The single-key settings' account is "default".
    await page.locator('#filter select[name="account"]').selectOption("default");
    await Promise.all([
      page.waitForURL((url) => url.searchParams.get("account") === "default", {
        timeout: 10_000,
      }),
      page.locator('#filter button[type="submit"]').click(),
    ]);
    expect(await page.locator(`tr[data-project="${projectId}"]`).isVisible()).toBe(true);
    expect(await page.locator("#filter-note").textContent()).toContain(
      "Showing the 1 of 1 watched project of the account default",
    );
    await page.close();
  });

  it("links to /metrics, /healthz and /readyz, and they answer", async (ctx) => {
    const { page } = await openStatusPage((note) => ctx.skip(note));
    for (const name of ["healthz", "readyz"]) {
      const href = await page.locator("nav a", { hasText: `/${name}` }).getAttribute("href");
      const target = new URL(href ?? "", page.url());
      expect(target.pathname).toBe(`/${name}`);
      const answer = await page.request.get(target.href);
      expect(answer.status()).toBe(200);
      expect(await answer.text()).toBe("OK\n");
    }
    // Follow the /metrics link as a person would.
    const [metrics] = await Promise.all([
      page.waitForResponse((r) => new URL(r.url()).pathname === "/metrics"),
      page.locator("nav a", { hasText: "/metrics" }).click(),
    ]);
    await page.waitForURL("**/metrics");
    expect(metrics.status()).toBe(200);
    expect(metrics.headers()["content-type"]).toMatch(/^text\/plain/);
    const text = await metrics.text();
    expect(text).toContain("pgcp_operations_total");
    expect(text).toContain(`project="${projectId}"`);
    await page.close();
  });

  it("takes a screenshot", async (ctx) => {
    const { page } = await openStatusPage((note) => ctx.skip(note));
    const file = path.join(shotsDir, "status.png");
    await page.screenshot({ path: file, fullPage: true });
    const png = await readFile(file);
    expect(png.length).toBeGreaterThan(1000);
    expect([...png.subarray(0, 8)]).toEqual([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
    await page.close();
  });

  it("contains no secret", async (ctx) => {
    const { page } = await openStatusPage((note) => ctx.skip(note));
    const html = await page.content();
    const raw = await (await fetch(`${exporter.server.url}/`)).text();
    // The page is the real one: it names the sinks and the API.
    expect(html).toContain('data-sink="webhook"');
    expect(html).toContain(sim.apiUrl);
    for (const [where, text] of [
      ["the rendered page", html],
      ["the served HTML", raw],
    ] as const) {
      const lower = text.toLowerCase();
      const found = secretPieces.filter((s) => lower.includes(s.toLowerCase()));
      expect(found, `${where} contains secrets`).toEqual([]);
    }
    await page.close();
  });
});
