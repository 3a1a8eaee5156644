/**
 * Just enough of a PromQL lexer to find the series selectors of an expression: every metric
 * name with its label matchers. Function and aggregation names, keywords, label lists of
 * `by`/`without`/`on`/`ignoring`/`group_left`/`group_right`, strings, numbers, durations and
 * ranges are skipped. Whether the expression parses is Prometheus' business (promtool); this
 * only says which series it names, for the check against the metric catalogue.
 */
import { CATALOGUE } from "../../../src/metrics/definitions/catalogue.js";
import { HISTOGRAM_SUFFIXES } from "../../../tools/dashboards/index.js";

export interface Matcher {
  readonly label: string;
  readonly op: "=" | "!=" | "=~" | "!~";
  readonly value: string;
}

export interface Selector {
  /** The metric name (also one given as `{__name__="…"}`). */
  readonly name: string;
  readonly matchers: readonly Matcher[];
}

const AGGREGATIONS = new Set([
  "sum",
  "min",
  "max",
  "avg",
  "group",
  "stddev",
  "stdvar",
  "count",
  "count_values",
  "bottomk",
  "topk",
  "quantile",
]);
/** Keywords followed by a parenthesised list of label names. */
const LABEL_LISTS = new Set(["by", "without", "on", "ignoring", "group_left", "group_right"]);
const KEYWORDS = new Set(["and", "or", "unless", "bool", "offset", "atan2", "inf", "nan"]);

const IDENTIFIER = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const MATCHER =
  /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`)\s*(,?)/y;

/** The selectors of `expr`, in order of appearance. */
export function selectors(expr: string): Selector[] {
  const out: Selector[] = [];
  let i = 0;
  const skipSpace = (): void => {
    while (i < expr.length && /\s/.test(expr.charAt(i))) i++;
  };
  /** Index just past the bracket that closes the one at `i`. */
  const skipBracketed = (open: string, close: string): void => {
    let depth = 0;
    for (; i < expr.length; i++) {
      const c = expr.charAt(i);
      if (c === '"' || c === "'" || c === "`") {
        i = endOfString(expr, i) - 1;
      } else if (c === open) {
        depth++;
      } else if (c === close && --depth === 0) {
        i++;
        return;
      }
    }
    throw new Error(`unbalanced ${open} in ${expr}`);
  };
  const readMatchers = (): Matcher[] => {
    // expr[i] is "{".
    i++;
    const matchers: Matcher[] = [];
    for (;;) {
      skipSpace();
      if (expr.charAt(i) === "}") {
        i++;
        return matchers;
      }
      MATCHER.lastIndex = i;
      const m = MATCHER.exec(expr);
      if (m === null) throw new Error(`cannot read the label matchers at ${i} of ${expr}`);
      matchers.push({
        label: m[1]!,
        op: m[2] as Matcher["op"],
        value: unquote(m[3]!),
      });
      i = MATCHER.lastIndex;
      if (m[4] === "" && !/^\s*}/.test(expr.slice(i))) {
        throw new Error(`expected , or } at ${i} of ${expr}`);
      }
    }
  };

  while (i < expr.length) {
    const c = expr.charAt(i);
    if (/\s/.test(c)) {
      i++;
    } else if (c === "#") {
      while (i < expr.length && expr.charAt(i) !== "\n") i++;
    } else if (c === '"' || c === "'" || c === "`") {
      i = endOfString(expr, i);
    } else if (c === "[") {
      skipBracketed("[", "]");
    } else if (c === "{") {
      const matchers = readMatchers();
      const name = matchers.find((m) => m.label === "__name__" && m.op === "=");
      if (name === undefined) throw new Error(`a selector without a metric name in ${expr}`);
      out.push({ name: name.value, matchers: matchers.filter((m) => m !== name) });
    } else if (/[0-9.]/.test(c)) {
      // A number or a duration (0.99, 1e3, 0x1f, 5m, 1h30m).
      while (i < expr.length && /[0-9a-zA-Z_.]/.test(expr.charAt(i))) i++;
    } else if (/[a-zA-Z_:]/.test(c)) {
      IDENTIFIER.lastIndex = i;
      const word = IDENTIFIER.exec(expr)![0];
      i += word.length;
      skipSpace();
      if (LABEL_LISTS.has(word)) {
        if (expr.charAt(i) === "(") skipBracketed("(", ")");
      } else if (KEYWORDS.has(word) || AGGREGATIONS.has(word) || expr.charAt(i) === "(") {
        // A keyword, an aggregation or a function call: its arguments are read on.
      } else {
        out.push({ name: word, matchers: expr.charAt(i) === "{" ? readMatchers() : [] });
      }
    } else {
      i++;
    }
  }
  return out;
}

/** Index just past the string literal that starts at `start`. */
function endOfString(expr: string, start: number): number {
  const quote = expr.charAt(start);
  for (let i = start + 1; i < expr.length; i++) {
    const c = expr.charAt(i);
    if (c === "\\" && quote !== "`") i++;
    else if (c === quote) return i + 1;
  }
  throw new Error(`unterminated string in ${expr}`);
}

function unquote(literal: string): string {
  const body = literal.slice(1, -1);
  return literal.startsWith("`") ? body : body.replace(/\\(.)/g, "$1");
}

/** Labels Prometheus adds to every scraped series (the target's). */
export const TARGET_LABELS: readonly string[] = ["job", "instance"];

/**
 * Every series name the exporter serves, with the labels a selector of it may match on: its
 * family's labels, the target's labels, and `le` for a histogram's buckets.
 */
export function catalogueSeries(): Map<string, readonly string[]> {
  const out = new Map<string, readonly string[]>();
  for (const entry of CATALOGUE) {
    const labels = [...entry.labels, ...TARGET_LABELS];
    if (entry.type !== "histogram") {
      out.set(entry.name, labels);
      continue;
    }
    for (const suffix of HISTOGRAM_SUFFIXES) {
      out.set(entry.name + suffix, suffix === "_bucket" ? [...labels, "le"] : labels);
    }
  }
  return out;
}

/**
 * What is wrong with the selectors of `expr` against the catalogue: names it does not have,
 * labels its families do not have. Empty when nothing is.
 */
export function catalogueProblems(expr: string): string[] {
  const series = catalogueSeries();
  const problems: string[] = [];
  for (const selector of selectors(expr)) {
    const labels = series.get(selector.name);
    if (labels === undefined) {
      problems.push(`${selector.name} is no series of the metric catalogue`);
      continue;
    }
    for (const m of selector.matchers) {
      if (!labels.includes(m.label)) problems.push(`${selector.name} has no label ${m.label}`);
    }
  }
  return problems;
}
