/**
 * The status page of a fleet: the whole exporter in-process against the simulator over real
 * HTTP, watching a personal key that also lists one organisation (Acme) and another
 * organisation's own key (Globex), as the demo does:
 * - each project's name beside its id, and its account and organisation, names from the API
 *   escaped (a project and an organisation named with HTML in them);
 * - `?account=` and `?org=` keep only the matching projects (the counts are theirs too), the
 *   page's GET form offers the accounts and organisations, an unknown value shows no project
 *   with a note, and a malformed one is answered 400.
 */
import { afterEach, expect, it } from "vitest";
import { DEFAULT_USER_ID } from "../../src/simulator/index.js";
import { startTestSimulator, type TestSimulator } from "../support/simulator.js";
import { startTestExporter, tempDir, waitFor, type TestExporter } from "./support.js";

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

const PERSONAL_KEY = "key-personal-status-0123";
const GLOBEX_KEY = "key-globex-status-8901";
/** Names from outside, with HTML in them: shown as text. */
const EVIL_PROJECT = `<img src=x onerror=alert(1)> Ops & "Co"`;
const EVIL_ORG = `Acme <b>Analytics</b>`;

/** The rows of the projects table, in order, by project id. */
function projectRows(html: string): string[] {
  return [...html.matchAll(/<tr data-project="([^"]*)"/g)].map((m) => m[1]!);
}

/** The row of one project. */
function rowOf(html: string, projectId: string): string {
  return new RegExp(`<tr data-project="${projectId}"[\\s\\S]*?</tr>`).exec(html)?.[0] ?? "";
}

/** A project made through the API, by name, with `key`; its creation's operations end. */
async function createNamed(
  sim: TestSimulator,
  name: string,
  options: { orgId?: string; apiKey?: string } = {},
): Promise<string> {
  const query = options.orgId === undefined ? "" : `?org_id=${options.orgId}`;
  const created = await sim.api<{ project: { id: string } }>("POST", `/projects${query}`, {
    body: { project: { name } },
    ...(options.apiKey === undefined ? {} : { apiKey: options.apiKey }),
  });
  expect(created.status).toBe(201);
  return created.body.project.id;
}

it("shows names beside ids and filters the projects by account and organisation", async () => {
  const sim = await startTestSimulator({ apiKey: PERSONAL_KEY, seed: 34 });
  cleanups.push(() => sim.close());
  const acme = await sim.sim.createOrganization({ name: EVIL_ORG, members: [DEFAULT_USER_ID] });
  const globex = await sim.sim.createOrganization({ name: "Globex Labs" });
  await sim.sim.createApiKey({ key: GLOBEX_KEY, org: globex.id });
  const personal = await createNamed(sim, EVIL_PROJECT);
  const billing = await createNamed(sim, "Acme Billing", { orgId: acme.id });
  const search = await createNamed(sim, "Acme Search", { orgId: acme.id });
  const lab = await createNamed(sim, "Globex Lab", { orgId: globex.id, apiKey: GLOBEX_KEY });
  await sim.sim.advance(60);

  const e: TestExporter = await startTestExporter(
    {
      api: { url: sim.apiUrl },
      state: { dir: await tempDir() },
      accounts: [
        { name: "people", keyEnv: "KEY_PERSONAL", projects: "all", orgs: [acme.id] },
        { name: "globex", keyEnv: "KEY_GLOBEX", projects: "all" },
      ],
    },
    { KEY_PERSONAL: PERSONAL_KEY, KEY_GLOBEX: GLOBEX_KEY },
  );
  cleanups.push(() => e.stop());

  const all = await waitFor("every project named, with its organisation", async () => {
    const page = await e.get("/");
    const named = [personal, billing, search, lab].every((id) =>
      rowOf(page.text, id).includes('class="project-name"'),
    );
    const orgs =
      rowOf(page.text, billing).includes("Acme &lt;b&gt;") &&
      rowOf(page.text, lab).includes("Globex Labs");
    return named && orgs ? page.text : undefined;
  });

  // Names beside ids, from outside and shown as text.
  expect(rowOf(all, billing)).toContain(
    `<span class="project-name">Acme Billing</span> <code class="project-id">${billing}</code>`,
  );
  expect(rowOf(all, personal)).toContain(
    `<span class="project-name">&lt;img src=x onerror=alert(1)&gt; Ops &amp; &quot;Co&quot;</span>`,
  );
  expect(all).not.toContain("<img");
  expect(all).not.toContain("<b>Analytics");
  // Where each lives: its account, its organisation (by name), each a link to the filter.
  expect(rowOf(all, billing)).toContain(`<a class="account" href="?account=people">people</a>`);
  expect(rowOf(all, billing)).toContain(
    `<a class="org" href="?org=${acme.id}" data-org="${acme.id}">Acme &lt;b&gt;Analytics&lt;/b&gt;</a>`,
  );
  expect(rowOf(all, lab)).toContain(`<a class="account" href="?account=globex">globex</a>`);
  expect(rowOf(all, personal)).not.toContain('class="org"');
  // The form offers the accounts and the organisations.
  expect(all).toContain('<form id="filter" method="get">');
  expect(all).toContain('<option value="globex">globex</option>');
  expect(all).toContain(
    `<option value="${acme.id}">Acme &lt;b&gt;Analytics&lt;/b&gt; (${acme.id})</option>`,
  );
  expect(all).toContain('id="count-projects"><b>4</b> projects');

  // By account.
  const globexPage = await e.get("/?account=globex");
  expect(globexPage.status).toBe(200);
  expect(projectRows(globexPage.text)).toEqual([lab]);
  expect(globexPage.text).toContain('id="count-projects"><b>1</b> project');
  expect(globexPage.text).toContain("Showing the 1 of 4 watched projects of the account");
  expect(globexPage.text).toContain('<option value="globex" selected>globex</option>');
  const people = await e.get("/?account=people");
  expect(projectRows(people.text).sort()).toEqual([personal, billing, search].sort());

  // By organisation, and both (the form's empty choice filters nothing).
  const acmePage = await e.get(`/?org=${acme.id}`);
  expect(projectRows(acmePage.text).sort()).toEqual([billing, search].sort());
  expect(acmePage.text).toContain('id="count-projects"><b>2</b> projects');
  const both = await e.get(`/?account=people&org=${acme.id}`);
  expect(projectRows(both.text).sort()).toEqual([billing, search].sort());
  const none = await e.get(`/?account=globex&org=${acme.id}`);
  expect(projectRows(none.text)).toEqual([]);
  expect(none.text).toContain("No watched project matches this filter.");
  const every = await e.get("/?account=&org=");
  expect(projectRows(every.text)).toHaveLength(4);
  expect(every.text).not.toContain('id="filter-note"');

  // Unknown, well formed: no project, and a note that says why.
  const nobody = await e.get("/?account=nobody");
  expect(nobody.status).toBe(200);
  expect(projectRows(nobody.text)).toEqual([]);
  expect(nobody.text).toContain(
    '<p class="note" id="filter-unknown-account">No account is named <b>nobody</b> (the accounts: people, globex): no project is shown.</p>',
  );
  const elsewhere = await e.get("/?org=org-elsewhere-12345678");
  expect(elsewhere.status).toBe(200);
  expect(projectRows(elsewhere.text)).toEqual([]);
  expect(elsewhere.text).toContain('id="filter-unknown-org"');
  expect(elsewhere.text).toContain("<code>org-elsewhere-12345678</code>");

  // Malformed: 400, saying what is wrong, never echoing markup as HTML.
  for (const [query, message] of [
    ["account=%3Cb%3Ex", `bad request: account="<b>x" is not an account's name`],
    ["org=Acme%20Corp", `bad request: org="Acme Corp" is not an organisation's id`],
    ["account=people&account=globex", "bad request: account is given 2 times"],
  ] as const) {
    const response = await fetch(`${e.exporter.server.url}/?${query}`);
    expect(response.status, query).toBe(400);
    expect(response.headers.get("content-type")).toBe("text/plain; charset=utf-8");
    expect(await response.text()).toContain(message);
  }
});
