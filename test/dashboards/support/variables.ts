/**
 * What Grafana does with the dashboards' query variables, for the tests: the two classic
 * Prometheus variable queries the dashboards use (`label_values(<selector>, <label>)`, answered
 * by `GET /api/v1/label/<label>/values?match[]=<selector>`, and `query_result(<expression>)`, an
 * instant query whose series Grafana writes as `{label="value",…} <value> <milliseconds>`), the
 * variable's regex (whose named groups `text` and `value` give an option a name beside its id),
 * and how a chosen value is put in a query (`a`, `(a|b)`, or "All": the custom all value, else
 * every option). Modelled on Grafana's Prometheus data source (`metric_find_query.ts`) and its
 * `metricNamesToVariableValues`, whose rules it follows.
 */
import type { VariableJson } from "./dashboards.js";

/** A variable's query, split as Grafana's Prometheus data source splits it. */
export type VariableQuery =
  | { readonly kind: "label_values"; readonly selector: string; readonly label: string }
  | { readonly kind: "query_result"; readonly expr: string };

export function parseVariableQuery(query: string): VariableQuery {
  const values = /^label_values\((.+),\s*([a-zA-Z_][a-zA-Z0-9_]*)\)\s*$/.exec(query);
  if (values !== null) return { kind: "label_values", selector: values[1]!, label: values[2]! };
  const result = /^query_result\((.+)\)\s*$/.exec(query);
  if (result !== null) return { kind: "query_result", expr: result[1]! };
  throw new Error(`not a variable query the dashboards use: ${query}`);
}

/** The PromQL of a variable's query: its selector, or its expression. */
export function variablePromql(query: string): string {
  const parsed = parseVariableQuery(query);
  return parsed.kind === "label_values" ? parsed.selector : parsed.expr;
}

/** One option of a variable: what the dropdown shows, and what the queries get. */
export interface VariableOption {
  readonly text: string;
  readonly value: string;
}

/** A series of an instant query's answer. */
export interface AnswerSeries {
  readonly metric: Readonly<Record<string, string>>;
  readonly value?: readonly [number, string];
}

/** A `query_result` series as Grafana writes it, for the variable's regex. */
export function queryResultText(series: AnswerSeries): string {
  const { __name__: name = "", ...labels } = series.metric;
  const pairs = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  const [seconds, value] = series.value ?? [0, ""];
  return `${name}{${pairs.join(",")}} ${value} ${String(seconds * 1000)}`;
}

/**
 * The options a variable's regex makes of the answers (Grafana's rules): an answer the regex does
 * not match is left out; with named groups `value` and `text` (in any of the global regex's
 * matches), each gives its part and stands in for the other when absent or empty; else the first
 * group, else the whole answer. Options with the same value are one.
 */
export function optionsOf(answers: readonly string[], regexSource?: string): VariableOption[] {
  const regex = regexSource === undefined || regexSource === "" ? undefined : toRegExp(regexSource);
  const options: VariableOption[] = [];
  for (const answer of answers) {
    if (regex === undefined) {
      options.push({ text: answer, value: answer });
      continue;
    }
    const matches = allMatches(answer, regex);
    if (matches.length === 0) continue;
    const valueGroup = matches.find((m) => Boolean(m.groups?.value));
    const textGroup = matches.find((m) => Boolean(m.groups?.text));
    const firstMatch = matches.find((m) => m.length > 1);
    if (valueGroup !== undefined || textGroup !== undefined) {
      const value = valueGroup?.groups?.value ?? textGroup?.groups?.text ?? "";
      const text = textGroup?.groups?.text ?? valueGroup?.groups?.value ?? "";
      options.push({ text, value });
    } else if (firstMatch !== undefined) {
      options.push({ text: firstMatch[1] ?? "", value: firstMatch[1] ?? "" });
    } else {
      options.push({ text: answer, value: answer });
    }
  }
  const seen = new Set<string>();
  return options.filter((o) => !seen.has(o.value) && seen.add(o.value));
}

function toRegExp(source: string): RegExp {
  const match = /^\/(.*)\/([gimsuy]*)$/s.exec(source);
  if (match === null) throw new Error(`a variable regex is written /…/flags: ${source}`);
  return new RegExp(match[1]!, match[2]);
}

function allMatches(text: string, regex: RegExp): RegExpExecArray[] {
  const out: RegExpExecArray[] = [];
  regex.lastIndex = 0;
  let match: RegExpExecArray | null;
  do {
    match = regex.exec(text);
    if (match !== null) out.push(match);
  } while (regex.global && match !== null && match[0] !== "");
  return out;
}

/** What a variable is set to: some of its values, or "All". */
export type Choice = readonly string[] | "all";

/**
 * What Grafana puts for the variable in a regex matcher (`=~"$name"`): a value escaped, several as
 * `(a|b)`; "All" is the variable's custom all value, else every option's value.
 */
export function interpolation(
  variable: Pick<VariableJson, "allValue">,
  options: readonly VariableOption[],
  choice: Choice,
): string {
  if (choice === "all" && variable.allValue !== undefined) return variable.allValue;
  const values = choice === "all" ? options.map((o) => o.value) : choice;
  const escaped = values.map(escapeRegex);
  return escaped.length === 1 ? escaped[0]! : `(${escaped.join("|")})`;
}

/** A value escaped for a regex inside a PromQL string, as Grafana escapes it. */
function escapeRegex(value: string): string {
  return value.replace(/\\/g, "\\\\\\\\").replace(/[$^*{}[\]'+?.()|]/g, "\\\\$&");
}

/** `text` with each `$name` of `values` replaced (longest names first). */
export function interpolate(text: string, values: Readonly<Record<string, string>>): string {
  let out = text;
  for (const name of Object.keys(values).sort((a, b) => b.length - a.length)) {
    out = out.replaceAll(`$${name}`, values[name]!);
  }
  return out;
}

/** What a variable query needs of Prometheus. */
export interface VariableSource {
  labelValues(label: string, selector: string): Promise<string[]>;
  query(expr: string): Promise<AnswerSeries[]>;
}

/**
 * The options of each of `variables` in order, each query with the variables before it as
 * `choices` says (unset: "All"), as Grafana resolves chained variables; and what each then puts
 * in the panels' queries.
 */
export async function resolveVariables(
  source: VariableSource,
  variables: readonly VariableJson[],
  choices: Readonly<Record<string, Choice>> = {},
): Promise<{ options: Map<string, VariableOption[]>; values: Record<string, string> }> {
  const options = new Map<string, VariableOption[]>();
  const values: Record<string, string> = {};
  for (const variable of variables) {
    if (variable.type !== "query" || typeof variable.query !== "string") continue;
    const parsed = parseVariableQuery(interpolate(variable.query, values));
    const answers =
      parsed.kind === "label_values"
        ? await source.labelValues(parsed.label, parsed.selector)
        : (await source.query(parsed.expr)).map(queryResultText);
    const found = optionsOf(answers, variable.regex);
    options.set(variable.name, found);
    values[variable.name] = interpolation(variable, found, choices[variable.name] ?? "all");
  }
  return { options, values };
}
