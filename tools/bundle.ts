/**
 * How the shipped code is bundled: `src/` and its dependencies into a handful of ES modules in
 * `dist/` (`npm run build`, with `tools/build.config.ts`), and the benchmarks' exporter host the
 * same way, so that what they measure is what ships.
 *
 * One file per entry point and per dynamic import instead of some 500 modules: V8 then keeps
 * less source text, fewer module records and less code. A process loading the daemon's modules
 * holds 64 MiB instead of 80 on Node 20 (docs/performance.md, item 26). Whitespace and comments
 * go, and local names are shortened; functions and classes keep theirs (stack traces name
 * them), and a source map beside each file maps positions back to `src/`
 * (`node --enable-source-maps`). Non-ASCII characters are escaped, so that V8 can keep each
 * file's text at one byte per character.
 */
import type { BuildOptions } from "rolldown";

export function bundleOptions(input: Readonly<Record<string, string>>, dir: string): BuildOptions {
  return {
    input: { ...input },
    platform: "node",
    // Imports name the compiled `.js` file; from the TypeScript sources, that is the `.ts` one.
    resolve: { extensionAlias: { ".js": [".ts", ".js"] } },
    logLevel: "warn",
    output: {
      dir,
      format: "esm",
      cleanDir: true,
      // Every file in `dir` itself: `src/version.ts` finds package.json one level up.
      entryFileNames: "[name].js",
      chunkFileNames: "[name]-[hash].js",
      minify: { compress: false, mangle: { keepNames: true }, codegen: { removeWhitespace: true } },
      charset: "ascii",
      sourcemap: true,
    },
  };
}
