/**
 * What `npm run build` ships in `dist/` (`tools/bundle.ts`), read from the files it wrote
 * (`npm test` builds first): code that loads nothing from `node_modules`, text that is all
 * ASCII, modules that do not make Node load its own undici, OpenTelemetry's exporters loaded only
 * when an export is on, and the licence of every package bundled into it.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { builtinModules } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { describe, expect, it } from "vitest";
import { LICENSES_FILE, LICENSES_RULE } from "../../tools/bundle.js";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const DIST = path.join(ROOT, "dist");
const code = readdirSync(DIST)
  .filter((file) => file.endsWith(".js"))
  .map((file) => ({ file, text: readFileSync(path.join(DIST, file), "utf8") }));

describe("dist/, as built", () => {
  it("holds the command and the health check, each importing only Node's modules and its own files", () => {
    expect(code.map((c) => c.file)).toEqual(expect.arrayContaining(["cli.js", "healthcheck.js"]));
    const builtins = new Set(builtinModules.flatMap((name) => [name, `node:${name}`]));
    const outside: string[] = [];
    for (const { file, text } of code) {
      // Static imports and dynamic ones (the code has no whitespace around them); a string
      // that is no module's name (`from` in a message) is not an import.
      for (const match of text.matchAll(/(?:\bfrom|\bimport\(?)\s*(["'`])([@\w.][\w@./:-]*)\1/g)) {
        const specifier = match[2] ?? "";
        if (!specifier.startsWith("./") && !builtins.has(specifier)) {
          outside.push(`${file}: ${specifier}`);
        }
      }
    }
    expect(outside).toEqual([]);
  });

  it("is ASCII throughout, so that Node 24 keeps each file's text at one byte per character", () => {
    const wide = code.filter(({ text }) => !/^[\p{ASCII}]*$/u.test(text)).map((c) => c.file);
    expect(wide).toEqual([]);
  });

  it("loads its modules without Node's own undici, which only fetch would use", () => {
    // Every module but the two entry points, which run their command when loaded.
    const modules = code
      .filter(({ file }) => file !== "cli.js" && file !== "healthcheck.js")
      .map(({ file }) => pathToFileURL(path.join(DIST, file)).href);
    const script = [
      `for (const url of ${JSON.stringify(modules)}) await import(url);`,
      "const loaded = process.moduleLoadList.filter((m) => m.includes('undici'));",
      "process.stdout.write(JSON.stringify(loaded));",
    ].join("\n");
    const out = execFileSync(process.execPath, ["--input-type=module", "-e", script], {
      encoding: "utf8",
    });
    expect(modules.length).toBeGreaterThan(5);
    expect(JSON.parse(out)).toEqual([]);
  });

  it("keeps OpenTelemetry's exporters in files only a dynamic import loads (an export on)", () => {
    const wire = code.filter(({ text }) => text.includes("OTLPTraceExporter")).map((c) => c.file);
    expect(wire.length).toBeGreaterThan(0);
    for (const file of wire) {
      const quoted = (q: string) => `${q}./${file}${q}`;
      const statically = code.filter(({ text }) =>
        ['"', "'", "`"].some(
          (q) =>
            text.includes(`from${quoted(q)}`) ||
            text.includes(`from ${quoted(q)}`) ||
            text.includes(`import${quoted(q)}`),
        ),
      );
      expect(
        statically.map((c) => c.file),
        `${file} is imported statically`,
      ).toEqual([]);
      const dynamically = code.filter(({ text }) =>
        ['"', "'", "`"].some((q) => text.includes(`import(${quoted(q)})`)),
      );
      expect(dynamically.length, `${file} is imported dynamically`).toBeGreaterThan(0);
    }
  });

  it("carries the licence of every runtime dependency it bundles", () => {
    const licenses = readFileSync(path.join(DIST, LICENSES_FILE), "utf8");
    const manifest = JSON.parse(readFileSync(path.join(ROOT, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    const sections = new Map(
      licenses
        .split(`\n${LICENSES_RULE}\n`)
        .slice(1)
        .map((section) => {
          const [heading = "", ...body] = section.trim().split("\n");
          return [heading.split(" ")[0] ?? "", body.join("\n").trim()] as const;
        }),
    );
    for (const name of Object.keys(manifest.dependencies)) {
      expect(sections.get(name), name).toMatch(/permission|licen[cs]e|copyright/i);
    }
  });
});
