/**
 * The lease manager's plan at each heartbeat, without a database: the even share, which held
 * projects it gives up (and why), and how many it claims.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { fairShare, planLeases, type HeldForPlan } from "../../src/leases/index.js";

const ids = (prefix: string, n: number) =>
  Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(2, "0")}`);

const held = (...projects: string[]): HeldForPlan[] =>
  projects.map((projectId, i) => ({ projectId, acquiredAt: i }));

const released = (plan: ReturnType<typeof planLeases>) =>
  plan.releases.map((r) => [r.lease.projectId, r.reason]);

/** Unique replica ids, in a random order. */
const replicaIds = fc.uniqueArray(fc.stringMatching(/^r-[a-z0-9]{1,4}$/), {
  minLength: 1,
  maxLength: 8,
});
const projectIds = fc.uniqueArray(fc.stringMatching(/^p-[a-z0-9]{1,4}$/), { maxLength: 40 });

describe("fair share", () => {
  it("gives the first n mod live replicas in id order one project more", () => {
    const live = ["r-a", "r-b", "r-c"];
    expect(live.map((r) => fairShare(10, live, r))).toEqual([4, 3, 3]);
    expect(live.map((r) => fairShare(2, live, r))).toEqual([1, 1, 0]);
  });

  it("adds up to the number of projects, and no two shares differ by more than one", () => {
    fc.assert(
      fc.property(replicaIds, fc.nat(500), (replicas, projects) => {
        const live = [...replicas].sort();
        const shares = live.map((r) => fairShare(projects, live, r));
        expect(shares.reduce((a, b) => a + b, 0)).toBe(projects);
        expect(Math.max(...shares) - Math.min(...shares)).toBeLessThanOrEqual(1);
      }),
    );
  });
});

describe("lease plan", () => {
  const candidates = ids("p", 10);

  it("claims the whole share when nothing is held", () => {
    const plan = planLeases({
      replicaId: "r-b",
      held: [],
      candidates,
      live: ["r-c", "r-b", "r-a"],
    });
    expect(plan.live).toEqual(["r-a", "r-b", "r-c"]);
    expect(plan.target).toBe(3);
    expect(plan.releases).toEqual([]);
    expect(plan.claim).toBe(3);
  });

  it("counts this replica among the live ones before its own heartbeat shows", () => {
    const plan = planLeases({ replicaId: "r-a", held: [], candidates, live: ["r-b"] });
    expect(plan.live).toEqual(["r-a", "r-b"]);
    expect(plan.target).toBe(5);
    expect(plan.claim).toBe(5);
  });

  it("gives up the most recently claimed projects above its share when a replica joins", () => {
    const plan = planLeases({
      replicaId: "r-a",
      held: held(...candidates),
      candidates,
      live: ["r-a", "r-b"],
    });
    expect(plan.target).toBe(5);
    expect(released(plan)).toEqual([
      ["p-09", "rebalance"],
      ["p-08", "rebalance"],
      ["p-07", "rebalance"],
      ["p-06", "rebalance"],
      ["p-05", "rebalance"],
    ]);
    expect(plan.claim).toBe(0);
  });

  it("gives up the projects no longer watched, and claims others in their place", () => {
    const plan = planLeases({
      replicaId: "r-a",
      held: held("p-00", "gone-1", "p-01", "gone-2"),
      candidates,
      live: ["r-a", "r-b"],
    });
    expect(released(plan)).toEqual([
      ["gone-1", "removed"],
      ["gone-2", "removed"],
    ]);
    expect(plan.claim).toBe(3);
  });

  it("gives everything up and claims nothing while no project is known", () => {
    const plan = planLeases({
      replicaId: "r-a",
      held: held("p-00", "p-01"),
      candidates: [],
      live: ["r-a"],
    });
    expect(plan.target).toBe(0);
    expect(released(plan)).toEqual([
      ["p-00", "removed"],
      ["p-01", "removed"],
    ]);
    expect(plan.claim).toBe(0);
  });

  /** A replica's view: the candidates, the live replicas, and what it holds (some unwatched). */
  const views = fc
    .record({
      replicas: replicaIds,
      candidates: projectIds,
      unwatched: fc.uniqueArray(fc.stringMatching(/^gone-[a-z0-9]{1,3}$/), { maxLength: 5 }),
      pick: fc.array(fc.boolean(), { minLength: 45, maxLength: 45 }),
      times: fc.array(fc.integer({ min: 0, max: 1000 }), { minLength: 45, maxLength: 45 }),
      self: fc.nat(),
    })
    .map(({ replicas, candidates, unwatched, pick, times, self }) => ({
      replicaId: replicas[self % replicas.length] ?? "r-0",
      live: replicas,
      candidates: [...candidates].sort(),
      held: [...candidates, ...unwatched]
        .filter((_, i) => pick[i])
        .map((projectId, i) => ({ projectId, acquiredAt: times[i] ?? 0 })),
    }));

  it("plans to hold exactly its share, never claiming more than it", () => {
    fc.assert(
      fc.property(views, (view) => {
        const plan = planLeases(view);
        expect(plan.target).toBe(fairShare(view.candidates.length, plan.live, view.replicaId));
        expect(plan.claim).toBeGreaterThanOrEqual(0);
        expect(plan.claim).toBeLessThanOrEqual(plan.target);
        expect(view.held.length - plan.releases.length + plan.claim).toBe(plan.target);
      }),
    );
  });

  it("never gives up a watched project within its share, nor keeps an unwatched one", () => {
    fc.assert(
      fc.property(views, (view) => {
        const plan = planLeases(view);
        const watched = new Set(view.candidates);
        const heldWatched = view.held.filter((l) => watched.has(l.projectId));
        for (const { lease, reason } of plan.releases) {
          expect(reason).toBe(watched.has(lease.projectId) ? "rebalance" : "removed");
        }
        const removed = plan.releases.filter((r) => r.reason === "removed").length;
        const rebalanced = plan.releases.filter((r) => r.reason === "rebalance");
        expect(removed).toBe(view.held.length - heldWatched.length);
        expect(rebalanced.length).toBe(Math.max(0, heldWatched.length - plan.target));
        // Those given up were claimed no earlier than any watched one kept.
        const gone = new Set(plan.releases.map((r) => r.lease));
        const kept = heldWatched.filter((l) => !gone.has(l));
        for (const { lease } of rebalanced) {
          for (const k of kept) expect(lease.acquiredAt).toBeGreaterThanOrEqual(k.acquiredAt);
        }
      }),
    );
  });

  it("settles every project on exactly one replica once each has followed its plan", () => {
    fc.assert(
      fc.property(
        replicaIds,
        projectIds,
        fc.array(fc.nat(), { minLength: 40, maxLength: 40 }),
        (replicas, projects, owners) => {
          // Any exclusive split to start from: each project with one replica, or with none.
          const holding = new Map(replicas.map((r) => [r, [] as HeldForPlan[]]));
          projects.forEach((projectId, i) => {
            const owner = replicas[(owners[i] ?? 0) % (replicas.length + 1)];
            if (owner !== undefined) holding.get(owner)?.push({ projectId, acquiredAt: i });
          });
          const candidates = [...projects].sort();
          const plans = replicas.map((replicaId) => {
            const plan = planLeases({
              replicaId,
              held: holding.get(replicaId) ?? [],
              candidates,
              live: replicas,
            });
            return { replicaId, plan };
          });
          // Released leases become free; each replica then claims from the free ones.
          const free = new Set(projects);
          const kept = new Map<string, string[]>();
          for (const { replicaId, plan } of plans) {
            const gone = new Set(plan.releases.map((r) => r.lease.projectId));
            const mine = (holding.get(replicaId) ?? [])
              .map((l) => l.projectId)
              .filter((p) => !gone.has(p));
            for (const p of mine) free.delete(p);
            kept.set(replicaId, mine);
          }
          const claims = plans.reduce((sum, { plan }) => sum + plan.claim, 0);
          expect(claims).toBe(free.size);
          for (const { replicaId, plan } of plans) {
            expect((kept.get(replicaId)?.length ?? 0) + plan.claim).toBe(plan.target);
          }
        },
      ),
    );
  });
});
