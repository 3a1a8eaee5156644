/**
 * The receiver-side signature check of docs/webhook.md, twice: the code block from the page,
 * loaded and run as it is, and the same procedure written out here in TypeScript.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import type { IncomingHttpHeaders } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

export type VerifyFn = (
  secret: string,
  headers: IncomingHttpHeaders,
  rawBody: Buffer | string,
  nowSeconds?: number,
) => boolean;

export const DOCS_PATH = new URL("../../../docs/webhook.md", import.meta.url);

/** docs/webhook.md's example, step by step. */
export const verifyAsDocumented: VerifyFn = (
  secret,
  headers,
  rawBody,
  nowSeconds = Date.now() / 1000,
) => {
  const timestamp = headers["x-pgcp-timestamp"];
  const signature = headers["x-pgcp-signature"];
  if (typeof timestamp !== "string" || !/^\d{1,12}$/.test(timestamp)) return false;
  if (typeof signature !== "string" || !signature.startsWith("v1=")) return false;
  if (Math.abs(nowSeconds - Number(timestamp)) > 300) return false;
  const expected = createHmac("sha256", secret).update(`${timestamp}.`).update(rawBody).digest();
  const given = Buffer.from(signature.slice("v1=".length), "hex");
  return given.length === expected.length && timingSafeEqual(given, expected);
};

/** The `js` block after the `signature-example` marker in docs/webhook.md. */
export function docsExampleSource(): string {
  const page = readFileSync(DOCS_PATH, "utf8");
  const marker = page.indexOf("<!-- signature-example");
  if (marker < 0) throw new Error("docs/webhook.md has no signature-example marker");
  const block = /```js\n([\s\S]*?)```/.exec(page.slice(marker));
  if (block?.[1] === undefined) throw new Error("no js block after the signature-example marker");
  return block[1];
}

/** Imports the docs' code block as an ES module and returns its `verifyPgcpSignature`. */
export async function loadDocsExample(): Promise<VerifyFn> {
  const dir = mkdtempSync(join(tmpdir(), "pgcp-webhook-docs-"));
  try {
    const file = join(dir, "verify.mjs");
    writeFileSync(file, docsExampleSource());
    const module = (await import(/* @vite-ignore */ pathToFileURL(file).href)) as {
      verifyPgcpSignature?: unknown;
    };
    if (typeof module.verifyPgcpSignature !== "function") {
      throw new Error("the docs example does not export verifyPgcpSignature");
    }
    return module.verifyPgcpSignature as VerifyFn;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
