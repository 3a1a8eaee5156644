/**
 * The status page of one replica among several (Postgres state store): its id, the live
 * replicas, what it holds of the fleet and its share, how old its leases are, and the projects
 * no live replica holds; nothing of it with the file store, and no replica id on the
 * counts-only page.
 */
import { describe, expect, it } from "vitest";
import { renderStatusPage, type ReplicaSource } from "../../src/status/index.js";
import { NOW, StatusFixture, state, viewOf } from "./support.js";

const REPLICA_ID = "pgcp-exporter-7d9f-2-1234-0a1b2c";

function replica(over: Partial<ReplicaSource> = {}): ReplicaSource {
  return {
    replicaId: REPLICA_ID,
    leaseMs: 30_000,
    heartbeatMs: 10_000,
    heldProjects: () => ["p-1", "p-2", "p-3"],
    liveReplicas: 3,
    targetProjects: 3,
    fleetProjects: 9,
    unownedProjects: 0,
    leaseAges: () => ({
      sinceRenewalMs: 4_000,
      oldestHeldMs: 7_500_000,
      newestHeldMs: 300_000,
    }),
    ...over,
  };
}

function fixture(): StatusFixture {
  return new StatusFixture({ now: () => NOW })
    .set("p-1", state("p-1"))
    .set("p-2", state("p-2"))
    .set("p-3", state("p-3"));
}

function page(source: ReplicaSource | undefined, detail: "full" | "summary" = "full"): string {
  return renderStatusPage(viewOf(fixture(), { replica: () => source }), detail);
}

/** The text of the element with this id, tags taken out. */
function textOf(html: string, id: string): string | undefined {
  const match = new RegExp(`<(\\w+)[^>]* id="${id}"[^>]*>([\\s\\S]*?)</\\1>`).exec(html);
  return match?.[2]?.replace(/<[^>]+>/g, "");
}

describe("the status page of a replica", () => {
  it("shows nothing of replicas with the file store", () => {
    const html = page(undefined);
    expect(html).not.toContain('id="replica"');
    expect(html).toContain('<li id="count-projects"><b>3</b> projects</li>');
  });

  it("says which replica it is, among how many, and what it holds of the fleet", () => {
    const html = page(replica());
    expect(html).toContain(`<code id="replica-id">${REPLICA_ID}</code>`);
    expect(textOf(html, "replica-live")).toBe("3");
    expect(textOf(html, "replica-held")).toBe("3");
    expect(textOf(html, "replica-fleet")).toBe("9");
    expect(html).toContain('of the fleet\'s <b id="replica-fleet">9</b> projects (its share: 3)');
    // The summary's count is this replica's, and says so.
    expect(textOf(html, "count-projects")).toBe("3 projects held by this replica");
    expect(textOf(html, "replica-unowned")).toBe("Every project has a live holder.");
  });

  it("says how old its leases are: the latest renewal, the oldest and newest claims", () => {
    const html = page(replica());
    expect(textOf(html, "replica-renewed")).toBe("4 s ago");
    expect(html).toContain("(every 10 s; a lease lasts 30 s)");
    expect(textOf(html, "replica-held-for")).toBe("2 h 5 min (the oldest) to 5 min (the newest)");
    // A renewal older than a lease is marked: its leases may have run out.
    const late = page(
      replica({
        leaseAges: () => ({ sinceRenewalMs: 45_000, oldestHeldMs: 60_000, newestHeldMs: 60_000 }),
      }),
    );
    expect(late).toContain('<span id="replica-renewed" class="stuck">45 s ago</span>');
  });

  it("warns of projects no live replica holds", () => {
    const html = page(replica({ unownedProjects: 2 }));
    expect(html).toContain('<p id="replica-unowned" class="banner"><b>2 projects</b> of the fleet');
    expect(textOf(html, "replica-unowned")).toContain("the replicas claim them");
  });

  it("says so before its first heartbeat, and when it holds nothing", () => {
    const first = page(
      replica({
        liveReplicas: undefined,
        targetProjects: undefined,
        fleetProjects: undefined,
        unownedProjects: undefined,
        heldProjects: () => [],
        leaseAges: () => ({
          sinceRenewalMs: undefined,
          oldestHeldMs: undefined,
          newestHeldMs: undefined,
        }),
      }),
    );
    expect(first).toContain("its first lease heartbeat has not completed yet");
    const view = viewOf(new StatusFixture({ now: () => NOW }), {
      replica: () =>
        replica({
          heldProjects: () => [],
          targetProjects: 0,
          liveReplicas: 12,
          leaseAges: () => ({
            sinceRenewalMs: 2_000,
            oldestHeldMs: undefined,
            newestHeldMs: undefined,
          }),
        }),
    });
    const idle = renderStatusPage(view);
    expect(textOf(idle, "replica-held")).toBe("0");
    expect(idle).toContain("(its share: 0)");
    expect(textOf(idle, "no-projects")).toBe(
      "This replica holds no project now: the other replicas hold them.",
    );
    expect(idle).not.toContain('id="replica-held-for"');
  });

  it("shows the counts without the replica's id on the counts-only page", () => {
    const html = page(replica({ unownedProjects: 1 }), "summary");
    expect(html).not.toContain(REPLICA_ID);
    expect(textOf(html, "replica-fleet")).toBe("9");
    expect(textOf(html, "replica-live")).toBe("3");
    expect(html).toContain("<b>1 project</b> of the fleet");
  });
});
