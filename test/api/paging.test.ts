import { describe, expect, it } from "vitest";
import { pageIsConsistent, walkPages } from "../../src/api/paging.js";

interface Page {
  items: number[];
  pagination?: { cursor: string };
}

/** A list of numbers served `limit` at a time; the cursor is the last index served. */
function server(total: number, cursorOnLastPage: boolean) {
  const requested: (string | undefined)[] = [];
  const fetchPage = (limit: number) => (cursor: string | undefined) => {
    requested.push(cursor);
    const from = cursor === undefined ? 0 : Number(cursor) + 1;
    const items = Array.from(
      { length: Math.max(0, Math.min(limit, total - from)) },
      (_, i) => from + i,
    );
    const last = items.at(-1) ?? from - 1;
    const more = from + items.length < total;
    const page: Page =
      more || cursorOnLastPage ? { items, pagination: { cursor: String(last) } } : { items };
    return Promise.resolve(page);
  };
  return { requested, fetchPage };
}

async function collect(pages: AsyncIterable<Page>): Promise<number[][]> {
  const out: number[][] = [];
  for await (const page of pages) out.push(page.items);
  return out;
}

describe("walkPages", () => {
  it("stops after a short page even though it carries a cursor", async () => {
    const { requested, fetchPage } = server(7, true);
    const pages = await collect(walkPages(fetchPage(3), (p) => p.items.length, 3));
    expect(pages).toEqual([[0, 1, 2], [3, 4, 5], [6]]);
    expect(requested).toEqual([undefined, "2", "5"]);
  });

  it("stops on an empty page when the last full page had a cursor", async () => {
    const { requested, fetchPage } = server(6, true);
    const pages = await collect(walkPages(fetchPage(3), (p) => p.items.length, 3));
    expect(pages).toEqual([
      [0, 1, 2],
      [3, 4, 5],
    ]);
    expect(requested).toEqual([undefined, "2", "5"]);
  });

  it("stops on a full page without a cursor", async () => {
    const { requested, fetchPage } = server(6, false);
    await collect(walkPages(fetchPage(3), (p) => p.items.length, 3));
    expect(requested).toEqual([undefined, "2"]);
  });

  it("throws instead of going round pages whose cursors lead back", async () => {
    const requested: (string | undefined)[] = [];
    // c1 -> c2 -> c1: every page full, every cursor different from the one that fetched it.
    const fetchPage = (cursor: string | undefined) => {
      requested.push(cursor);
      return Promise.resolve<Page>({
        items: [1, 2],
        pagination: { cursor: cursor === "c1" ? "c2" : "c1" },
      });
    };
    await expect(collect(walkPages(fetchPage, (p) => p.items.length, 2))).rejects.toThrow(
      /c1 was already followed: the list's pages form a loop/,
    );
    expect(requested).toEqual([undefined, "c1", "c2"]);
  });

  it("starts from a given cursor and yields nothing for an empty list", async () => {
    const { fetchPage } = server(5, true);
    expect(await collect(walkPages(fetchPage(2), (p) => p.items.length, 2, "1"))).toEqual([
      [2, 3],
      [4],
    ]);
    expect(
      await collect(walkPages(server(0, true).fetchPage(2), (p) => p.items.length, 2)),
    ).toEqual([]);
  });
});

describe("pageIsConsistent", () => {
  const check = (sent: string | undefined, items: number, cursor: string | undefined) =>
    pageIsConsistent<Page>(
      sent,
      2,
      (p) => p.items.length,
    )({
      items: Array.from({ length: items }, () => 0),
      ...(cursor === undefined ? {} : { pagination: { cursor } }),
    });

  it("flags a full page that hands back the cursor it was fetched with", () => {
    expect(check("c1", 2, "c1")).toMatch(/did not advance/);
    expect(check("c1", 2, "c2")).toBeUndefined();
    expect(check("c1", 1, "c1")).toBeUndefined();
    expect(check(undefined, 2, "c1")).toBeUndefined();
  });

  it("flags a full page without a cursor, not a short one", () => {
    expect(check("c1", 2, undefined)).toMatch(/a full page of 2 came without pagination.cursor/);
    expect(check(undefined, 2, undefined)).toMatch(/without pagination.cursor/);
    expect(check("c1", 1, undefined)).toBeUndefined();
  });
});
