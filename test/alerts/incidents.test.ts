/**
 * The platform incident rules: which failures are one incident, when it opens, grows and
 * resolves, and that the same records always give the same incidents (what a restart relies on).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  boardLookup,
  carriedAfter,
  errorClass,
  incidentBoard,
  incidentWork,
  markFailure,
  withRecent,
  type IncidentSettings,
  type Placed,
  type ProjectIncidents,
} from "../../src/alerts/rules/incidents.js";
import type { IncidentKey, IncidentMark, IncidentRecord } from "../../src/store/index.js";

const settings: IncidentSettings = { windowMs: 600_000, minProjects: 5 };
const key: IncidentKey = {
  action: "start_compute",
  regionId: "aws-us-east-2",
  errorClass: errorClass("safekeeper quorum not reached for endpoint ep-a-1 (sk-1)"),
};

/** Marks each failure in turn against the records so far, as the polls would commit them. */
function failAll(
  failures: readonly { projectId: string; atMs: number; key?: IncidentKey }[],
  records: Map<string, IncidentRecord> = new Map(),
): Map<string, IncidentRecord> {
  for (const [i, f] of failures.entries()) {
    const board = incidentBoard(asList(records), settings);
    const mark = markFailure(
      boardLookup(board),
      { projectId: f.projectId, alertId: `alert-${f.projectId}-${i}`, key: f.key ?? key },
      f.atMs,
      settings,
    );
    const before = records.get(f.projectId) ?? { marks: [], carried: [], resolved: [] };
    records.set(f.projectId, { ...before, marks: [...before.marks, mark] });
  }
  return records;
}

function asList(records: ReadonlyMap<string, IncidentRecord>): ProjectIncidents[] {
  return [...records].map(([projectId, record]) => ({ projectId, record }));
}

function marks(records: ReadonlyMap<string, IncidentRecord>): IncidentMark[] {
  return [...records.values()].flatMap((r) => r.marks);
}

const projects = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => `proj-p${String(from + i)}`);

describe("the error class", () => {
  it("is the same for texts that differ by ids, numbers, quoted values and hex", () => {
    const a = errorClass(
      "safekeeper quorum not reached for endpoint ep-cool-darkness-123456 (sk-17) after 3 tries",
    );
    const b = errorClass(
      "safekeeper  quorum not reached for endpoint ep-wispy-meadow-987 (sk-2) after 12 tries",
    );
    expect(a).toBe(b);
    expect(a).toBe("safekeeper quorum not reached for endpoint <id> (<id>) after <n> tries");
    expect(errorClass('role "alice" does not exist (0xdeadbeef42)')).toBe(
      errorClass("role 'bob' does not exist (0x00ff00aa)"),
    );
    expect(errorClass("tenant 9b2f6a1e-4c3d-4e5f-8a9b-0c1d2e3f4a5b not found")).toBe(
      "tenant <id> not found",
    );
  });

  it("keeps apart texts that say different things", () => {
    expect(errorClass("safekeeper quorum not reached")).not.toBe(
      errorClass("pageserver unavailable"),
    );
  });
});

describe("platform incidents", () => {
  it("form when the fifth project fails within the window, and later failures join", () => {
    const records = failAll(projects(7).map((projectId, i) => ({ projectId, atMs: i * 30_000 })));
    const all = marks(records);
    expect(all.slice(0, 4).every((m) => m.incidentId === undefined)).toBe(true);
    const id = all[4]?.incidentId;
    expect(id).toMatch(/^inc-/);
    expect(all.slice(5).map((m) => m.incidentId)).toEqual([id, id]);

    const board = incidentBoard(asList(records), settings);
    expect(board.open).toHaveLength(1);
    // The four failures that formed it with the fifth are its projects too.
    expect(board.open[0]?.projects).toEqual(projects(7));
    expect(board.open[0]?.failures).toBe(7);
  });

  it("do not group failures of other regions, actions or errors, nor failures a window apart", () => {
    const other = (k: Partial<IncidentKey>) => ({ ...key, ...k });
    const records = failAll([
      ...projects(3).map((projectId) => ({ projectId, atMs: 0 })),
      { projectId: "proj-x1", atMs: 0, key: other({ regionId: "aws-eu-central-1" }) },
      { projectId: "proj-x2", atMs: 0, key: other({ action: "suspend_compute" }) },
      { projectId: "proj-x3", atMs: 0, key: other({ errorClass: "pageserver unavailable" }) },
      ...projects(2, 3).map((projectId) => ({ projectId, atMs: settings.windowMs })),
    ]);
    expect(marks(records).every((m) => m.incidentId === undefined)).toBe(true);
    expect(incidentBoard(asList(records), settings).open).toEqual([]);
  });

  it("count a project once, however often it fails", () => {
    const records = failAll(
      Array.from({ length: 10 }, (_, i) => ({ projectId: `proj-p${String(i % 4)}`, atMs: i })),
    );
    expect(marks(records).every((m) => m.incidentId === undefined)).toBe(true);
  });

  it("decide a failure raised again the same way", () => {
    const records = failAll(projects(5).map((projectId) => ({ projectId, atMs: 0 })));
    const board = incidentBoard(asList(records), settings);
    const fifth = marks(records)[4];
    if (fifth === undefined) throw new Error("no fifth mark");
    const again = markFailure(
      boardLookup(board),
      { projectId: "proj-p4", alertId: fifth.alertId, key },
      5_000,
      settings,
    );
    expect(again).toEqual(fifth);
  });

  it("open once, update when they grow, and resolve a window after the last failure", () => {
    let records = failAll(projects(5).map((projectId, i) => ({ projectId, atMs: i * 1000 })));
    const watched = () => true;
    const none = () => false;
    const step = (nowMs: number) => {
      const board = incidentBoard(asList(records), settings);
      const work = incidentWork(board, nowMs, settings, watched, none);
      for (const w of work) {
        records.set(w.carrier, carriedAfter(records.get(w.carrier), w, nowMs));
      }
      return work.map((w) => [w.state, w.carrier, w.incident.projectCount]);
    };
    // The project whose failure formed it carries it.
    expect(step(5_000)).toEqual([["opened", "proj-p4", 5]]);
    expect(step(6_000)).toEqual([]);
    records = failAll([{ projectId: "proj-p9", atMs: 60_000 }], records);
    expect(step(61_000)).toEqual([["updated", "proj-p4", 6]]);
    expect(step(61_000 + settings.windowMs - 1_001)).toEqual([]);
    expect(step(60_000 + settings.windowMs)).toEqual([["resolved", "proj-p4", 6]]);
    // Resolved for good: the same records give nothing more to tell.
    expect(step(60_000 + 2 * settings.windowMs)).toEqual([]);
    expect(incidentBoard(asList(records), settings).open).toEqual([]);
  });

  it("join the latest incident of a group while an earlier one awaits its resolution", () => {
    const later = settings.windowMs + 1_000;
    const records = failAll([
      ...projects(5).map((projectId) => ({ projectId, atMs: 0 })),
      // A window on, the first is due to resolve: these form a second, which the last joins.
      ...projects(6, 5).map((projectId, i) => ({ projectId, atMs: later + i })),
    ]);
    const ids = marks(records).map((m) => m.incidentId);
    const [first, second] = [ids[4], ids[9]];
    expect(first).toBeDefined();
    expect(second).toBeDefined();
    expect(second).not.toBe(first);
    expect(ids[10]).toBe(second);
  });

  it("decide each failure the same way from an older board and the failures decided since", () => {
    const small: IncidentSettings = { windowMs: 10_000, minProjects: 3 };
    const keys: IncidentKey[] = [key, { ...key, regionId: "aws-eu-central-1" }];
    const failure = fc.record({
      project: fc.integer({ min: 0, max: 7 }),
      key: fc.integer({ min: 0, max: 1 }),
      gapMs: fc.integer({ min: 0, max: 4_000 }),
    });
    fc.assert(
      fc.property(
        fc.array(failure, { maxLength: 40 }),
        fc.integer({ min: 2, max: 6 }),
        (fs, every) => {
          /** The marks when the board is derived again every `rebuild` failures. */
          const decide = (rebuild: number) => {
            const records = new Map<string, IncidentRecord>();
            let board = incidentBoard([], small);
            let recent: Placed[] = [];
            let atMs = 0;
            return fs.map((f, i) => {
              if (i % rebuild === 0) {
                board = incidentBoard(asList(records), small);
                recent = [];
              }
              atMs += f.gapMs;
              const projectId = `proj-p${String(f.project)}`;
              const mark = markFailure(
                withRecent(boardLookup(board), recent),
                { projectId, alertId: `alert-${String(i)}`, key: keys[f.key]! },
                atMs,
                small,
              );
              recent.push({ ...mark, projectId });
              const before = records.get(projectId) ?? { marks: [], carried: [], resolved: [] };
              records.set(projectId, { ...before, marks: [...before.marks, mark] });
              return mark;
            });
          };
          expect(decide(every)).toEqual(decide(1));
        },
      ),
    );
  });

  it("derive an incident with more marks than a call takes arguments", () => {
    const id = "inc-fleet";
    const many: ProjectIncidents[] = Array.from({ length: 10_000 }, (_, p) => ({
      projectId: `proj-p${String(p)}`,
      record: {
        marks: Array.from({ length: 20 }, (_, i) => ({
          ...key,
          alertId: `alert-${String(p)}-${String(i)}`,
          atMs: p + i,
          incidentId: id,
        })),
        carried: [],
        resolved: [],
      },
    }));
    const [incident] = incidentBoard(many, settings).open;
    expect(incident?.failures).toBe(200_000);
    expect(incident?.projectCount).toBe(10_000);
    expect([incident?.firstAtMs, incident?.lastAtMs]).toEqual([0, 10_018]);
  });

  it("move to a watched project when the carrier is no longer watched", () => {
    const records = failAll(projects(5).map((projectId) => ({ projectId, atMs: 0 })));
    const board = incidentBoard(asList(records), settings);
    const work = incidentWork(
      board,
      1_000,
      settings,
      (p) => p !== "proj-p4",
      () => false,
    );
    expect(work.map((w) => [w.state, w.carrier])).toEqual([["opened", "proj-p0"]]);
  });

  it("hold back an update while the previous one waits in the carrier's outbox", () => {
    const records = failAll(projects(5).map((projectId) => ({ projectId, atMs: 0 })));
    const work = (nowMs: number, pending: boolean) =>
      incidentWork(
        incidentBoard(asList(records), settings),
        nowMs,
        settings,
        () => true,
        () => pending,
      );
    for (const w of work(0, false)) {
      records.set(w.carrier, carriedAfter(records.get(w.carrier), w, 0));
    }
    failAll([{ projectId: "proj-p7", atMs: 1_000 }], records);
    expect(work(2_000, true)).toEqual([]);
    expect(work(2_000, false).map((w) => w.state)).toEqual(["updated"]);
  });
});
