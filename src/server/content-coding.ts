/**
 * Which content coding a response gets, from the request's `Accept-Encoding` (RFC 9110,
 * section 12.5.3): gzip when the client accepts it at least as much as the plain body,
 * the plain body (`identity`) otherwise. A pure decision; the server applies it.
 */

export type ContentCoding = "gzip" | "identity";

/**
 * `gzip` when `Accept-Encoding` gives gzip (or `x-gzip`, or `*` when neither is named) a
 * weight above 0 and not below identity's; `identity` otherwise, also with no header at all
 * or an empty one. Identity is acceptable unless named with `q=0` (or refused through
 * `*;q=0` without being named); when the client refuses both, the plain body is still
 * served rather than an error, which RFC 9110 allows and which keeps a scrape working.
 */
export function chooseContentCoding(acceptEncoding: string | undefined): ContentCoding {
  if (acceptEncoding === undefined) return "identity";
  const weights = parseAcceptEncoding(acceptEncoding);
  const any = weights.get("*");
  const gzip = weights.get("gzip") ?? weights.get("x-gzip") ?? any ?? 0;
  const identity = weights.get("identity") ?? any ?? 1;
  return gzip > 0 && gzip >= identity ? "gzip" : "identity";
}

/**
 * Each named coding (lower case) and its weight, 1 when it has none. An entry whose weight is
 * not a number from 0 to 1 is ignored; a coding named twice keeps its first weight.
 */
function parseAcceptEncoding(header: string): Map<string, number> {
  const weights = new Map<string, number>();
  for (const entry of header.split(",")) {
    const [coding = "", ...parameters] = entry.split(";").map((part) => part.trim());
    if (coding === "" || weights.has(coding.toLowerCase())) continue;
    const weight = weightOf(parameters);
    if (weight !== undefined) weights.set(coding.toLowerCase(), weight);
  }
  return weights;
}

function weightOf(parameters: readonly string[]): number | undefined {
  const q = parameters.find((p) => /^q\s*=/i.test(p));
  if (q === undefined) return 1;
  const text = q.slice(q.indexOf("=") + 1).trim();
  if (!/^(?:0(?:\.\d{0,3})?|1(?:\.0{0,3})?)$/.test(text)) return undefined;
  return Number(text);
}
