/**
 * Keeps Node's own copy of undici out of the bundle's processes. Node carries one for `fetch`
 * and loads it lazily, the first time anything reads one of the names it defines; the daemon
 * never calls it (its HTTP client is the undici package), yet reads in the bundle loaded it at
 * start, for resident memory it never used (docs/performance.md#memory).
 * `test/architecture/dist-bundle.test.ts` checks that loading `dist/` loads it no more.
 */
import { createRequire } from "node:module";
import type { Plugin } from "rolldown";

/**
 * `node:http`, where the bundle's own modules import it, is loaded with `require`. On Node 22
 * and later its exports include `WebSocket`, `MessageEvent` and `CloseEvent`, defined by Node's
 * undici; an ES import reads every export of a built-in module to build its namespace, so
 * `import { createServer } from "node:http"` alone loads that undici. `require` reads none.
 *
 * The module that stands for `node:http` exports what `require("node:http")` holds as plain
 * values when the bundle is built (functions, classes, tables), and not the properties Node
 * computes when they are read (those three, `globalAgent`, `maxHeaderSize`): importing one of
 * those fails the build, with the name.
 */
export function httpByRequire(): Plugin {
  const id = "\0pgcp:node-http";
  return {
    name: "pgcp-http-by-require",
    resolveId: {
      filter: { id: /^(node:)?http$/ },
      handler(_source, _importer, extra) {
        return extra.kind === "import-statement" ? id : null;
      },
    },
    load: {
      filter: { id: new RegExp(`^${id}$`) },
      handler() {
        const http = createRequire(import.meta.url)("node:http") as Record<string, unknown>;
        const names = Object.entries(Object.getOwnPropertyDescriptors(http))
          .filter(([name, descriptor]) => "value" in descriptor && /^[A-Za-z]\w*$/.test(name))
          .map(([name]) => name);
        return [
          'import { createRequire } from "node:module";',
          'const http = createRequire(import.meta.url)("node:http");',
          "export default http;",
          `export const { ${names.join(", ")} } = http;`,
        ].join("\n");
      },
    },
  };
}

/**
 * undici's cookie helpers accept Node's `Headers` besides undici's own, and read
 * `globalThis.Headers` when they load. In the bundle they accept undici's own alone (the daemon
 * calls none of them).
 */
export function undiciCookiesWithoutGlobalHeaders(): Plugin {
  return sameLengthEdit("undici/lib/web/cookies/index.js", {
    from: "[Headers, globalThis.Headers].filter(Boolean)",
    to: "[Headers]",
  });
}

/**
 * pg asks whether it runs on Cloudflare Workers when its Postgres store loads: by `navigator`
 * where there is one (Node 21 and later), else by constructing a `Response`, Node's undici's.
 * The bundle runs on Node alone, where the answer is no; the second question is not asked.
 */
export function pgWithoutResponseProbe(): Plugin {
  return sameLengthEdit("pg/lib/stream.js", {
    from: "if (typeof Response === 'function') {",
    to: "if (false) {",
  });
}

/**
 * Changes `from` into `to` in the file `path` of `node_modules`. The text keeps its length, so
 * that the source map stays true; the build fails if `from` is no longer there, so that an
 * upgrade of the package cannot bring the cost back unseen.
 */
function sameLengthEdit(path: string, edit: { from: string; to: string }): Plugin {
  const to = edit.to.padEnd(edit.from.length, " ");
  return {
    name: `pgcp-edit:${path}`,
    transform: {
      filter: { id: `**/node_modules/${path}` },
      handler(code) {
        if (!code.includes(edit.from)) this.error(`${path} no longer holds \`${edit.from}\``);
        return { code: code.replace(edit.from, to), map: null };
      },
    },
  };
}
