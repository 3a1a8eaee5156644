/**
 * How `Accept-Encoding` chooses between the gzip form of `/metrics` and its plain body.
 */
import { describe, expect, it } from "vitest";
import { chooseContentCoding } from "../../src/server/content-coding.js";

describe("choosing the content coding from Accept-Encoding", () => {
  it.each([
    "gzip", // what Prometheus sends
    "gzip, deflate",
    "GZip",
    "x-gzip",
    "*",
    "deflate, *;q=0.1",
    "gzip;q=0.5, identity;q=0.5",
    "identity;q=0, *",
    "gzip;q=1.000",
  ])("%j: gzip", (header) => {
    expect(chooseContentCoding(header)).toBe("gzip");
  });

  it.each<[string | undefined, string]>([
    [undefined, "no header"],
    ["", "an empty header: identity only"],
    ["identity", "identity only"],
    ["deflate, br", "other codings only"],
    ["gzip;q=0", "gzip refused"],
    ["gzip; q=0.000", "gzip refused, with spaces"],
    ["*;q=0, identity", "everything but identity refused"],
    ["gzip;q=0, *", "gzip refused by name, whatever * says"],
    ["gzip;q=0.4, identity", "identity preferred"],
    ["gzip;q=2", "a weight out of range: the entry is ignored"],
    ["gzip;q=abc", "a weight that is not a number: the entry is ignored"],
    ["identity;q=0", "both refused: the plain body rather than an error"],
  ])("%j (%s): the plain body", (header) => {
    expect(chooseContentCoding(header)).toBe("identity");
  });
});
