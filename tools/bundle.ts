/**
 * How the shipped code is bundled: `src/` and its dependencies into a handful of ES modules in
 * `dist/` (`npm run build`, with `tools/build.config.ts`), and the benchmarks' exporter host the
 * same way, so that what they measure is what ships.
 *
 * One file per entry point and per dynamic import instead of some 500 modules: V8 then keeps
 * less source text, fewer module records and less code, so the daemon's process holds less
 * memory (docs/performance.md#memory). Whitespace and comments go, and local names are
 * shortened; functions and classes keep theirs (stack traces name them), and a source map
 * beside each file maps positions back to `src/`
 * (`node --enable-source-maps`). Non-ASCII characters are escaped and no comment is kept, so
 * that every file is ASCII: Node 24 keeps a file's text at two bytes per character as soon as
 * one character is not. The licences of the packages bundled, which their comments and their
 * own folders carried, are written beside the code instead (`THIRD_PARTY_LICENSES`). The reads
 * that would load Node's own undici at start are changed (`without-node-undici.ts`).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import type { BuildOptions, Plugin } from "rolldown";
import {
  httpByRequire,
  pgWithoutResponseProbe,
  undiciCookiesWithoutGlobalHeaders,
} from "./without-node-undici.js";

/** The file in the output folder that holds the licences of the bundled packages. */
export const LICENSES_FILE = "THIRD_PARTY_LICENSES";

/** The line before each package's section in `LICENSES_FILE`. */
export const LICENSES_RULE = "=".repeat(78);

export function bundleOptions(input: Readonly<Record<string, string>>, dir: string): BuildOptions {
  return {
    input: { ...input },
    platform: "node",
    // Imports name the compiled `.js` file; from the TypeScript sources, that is the `.ts` one.
    resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
    logLevel: "warn",
    plugins: [
      httpByRequire(),
      undiciCookiesWithoutGlobalHeaders(),
      pgWithoutResponseProbe(),
      bundledLicenses(),
    ],
    output: {
      dir,
      format: "esm",
      cleanDir: true,
      // Every file in `dir` itself: `src/version.ts` finds package.json one level up.
      entryFileNames: "[name].js",
      chunkFileNames: "[name]-[hash].js",
      minify: { compress: false, mangle: { keepNames: true }, codegen: { removeWhitespace: true } },
      comments: false,
      charset: "ascii",
      sourcemap: true,
    },
  };
}

/** A package some bundled module comes from. */
interface BundledPackage {
  readonly name: string;
  readonly version: string;
  readonly license: string;
  /** Its licence files' text, in name order. */
  readonly texts: readonly string[];
}

/** Writes `LICENSES_FILE`: each bundled package's name, version, licence and licence files. */
function bundledLicenses(): Plugin {
  return {
    name: "pgcp-bundled-licenses",
    generateBundle(_options, bundle) {
      const roots = new Set<string>();
      for (const output of Object.values(bundle)) {
        if (output.type !== "chunk") continue;
        for (const id of output.moduleIds) {
          const root = packageRoot(id);
          if (root !== undefined) roots.add(root);
        }
      }
      const packages = [...roots].map(readPackage).sort((a, b) => a.name.localeCompare(b.name));
      const missing = packages.filter((p) => p.texts.length === 0).map((p) => p.name);
      if (missing.length > 0) {
        this.error(`bundled packages without a licence text: ${missing.join(", ")}`);
      }
      this.emitFile({
        type: "asset",
        fileName: LICENSES_FILE,
        source: licensesText(packages),
      });
    },
  };
}

/**
 * The folder of the package under `node_modules` that holds `id`, if any (not a folder whose
 * name starts with a dot: the benchmarks compile the sources into `node_modules/.cache`).
 */
function packageRoot(id: string): string | undefined {
  const parts = id.split(path.sep);
  const at = parts.lastIndexOf("node_modules");
  const first = parts[at + 1];
  if (at < 0 || first === undefined || first.startsWith(".")) return undefined;
  const scoped = first.startsWith("@");
  return parts.slice(0, at + (scoped ? 3 : 2)).join(path.sep);
}

function readPackage(root: string): BundledPackage {
  const manifest = JSON.parse(readFileSync(path.join(root, "package.json"), "utf8")) as Record<
    string,
    unknown
  >;
  const field = (key: string, otherwise: string): string => {
    const value = manifest[key];
    return typeof value === "string" ? value : otherwise;
  };
  const files = readdirSync(root)
    .filter((file) => /^(licen[cs]e|copying|notice)(\.|$)/i.test(file))
    .sort()
    .map((file) => readFileSync(path.join(root, file), "utf8").trim());
  const readme = path.join(root, "README.md");
  const section = existsSync(readme) ? licenseSection(readFileSync(readme, "utf8")) : undefined;
  const texts = files.length > 0 || section === undefined ? files : [section];
  return {
    name: field("name", path.basename(root)),
    version: field("version", "unknown"),
    license: field("license", "unknown"),
    texts,
  };
}

/** A README's licence section (some packages carry their licence there alone). */
function licenseSection(readme: string): string | undefined {
  const lines = readme.split("\n");
  const start = lines.findIndex((line) => /^#+\s*licen[cs]e\b/i.test(line));
  if (start < 0) return undefined;
  const level = /^#+/.exec(lines[start] ?? "")?.[0].length ?? 1;
  const rest = lines.slice(start + 1);
  const end = rest.findIndex((line) => (/^#+/.exec(line)?.[0].length ?? Infinity) <= level);
  const text = (end < 0 ? rest : rest.slice(0, end)).join("\n").trim();
  return text === "" ? undefined : text;
}

function licensesText(packages: readonly BundledPackage[]): string {
  const header =
    "The files of this folder bundle the following packages. Each one's licence follows.\n";
  const sections = packages.map(
    (p) => `${LICENSES_RULE}\n${p.name} ${p.version} (${p.license})\n\n${p.texts.join("\n\n")}\n`,
  );
  return [header, ...sections].join("\n");
}
