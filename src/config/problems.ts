/**
 * Configuration problems in our own words. zod's issues become one line per problem naming the
 * setting's path, what it expects and an example (`listen: must be a string "host:port", for
 * example "0.0.0.0:9700"`); an unknown key is named with the known one it is closest to
 * (`poll.intervall: unknown setting; did you mean poll.interval?`); a YAML syntax error gives
 * its line, column and the offending line. No library wording reaches the user.
 */
import { LineCounter, parseDocument, type YAMLError } from "yaml";
import type { z } from "zod";
import { closest, editDistance } from "./closest.js";
import { durationInput } from "./duration.js";

type Schema = z.core.$ZodType;
type RawIssue = z.core.$ZodRawIssue;

/** What a setting expects (`a string "host:port"`) and an example of it (`"0.0.0.0:9700"`). */
export interface SettingHint {
  readonly expects?: string;
  readonly example?: string;
}

/**
 * Hints by setting path, with `[]` for a list's items (`sinks[].maxBatch`). A setting with a
 * default needs none: its default is its example.
 */
export type SettingHints = Readonly<Record<string, SettingHint>>;

/** One problem: the setting it is about (its full path) and the sentence for it. */
export interface Problem {
  readonly path: readonly PropertyKey[];
  readonly text: string;
}

/** `poll.interval`, `sinks[0].name`; `(top level)` for the root. */
export function pathText(path: readonly PropertyKey[]): string {
  const text = path
    .map((p, i) => (typeof p === "number" ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
    .join("");
  return text === "" ? "(top level)" : text;
}

/**
 * zod's issues as problems, one per line. An unknown-keys issue gives one problem per key: its
 * message holds a line per key, `key: why` (see `issueMessages`).
 */
export function issueProblems(error: z.ZodError): Problem[] {
  return error.issues.flatMap((issue): Problem[] => {
    if (issue.code !== "unrecognized_keys") {
      return [{ path: issue.path, text: `${pathText(issue.path)}: ${issue.message}` }];
    }
    const lines = issue.message.split("\n");
    const perKey = issue.keys.every((key, i) => lines[i]?.startsWith(`${key}: `) === true);
    if (!perKey || lines.length !== issue.keys.length) {
      return [{ path: issue.path, text: `${pathText(issue.path)}: ${issue.message}` }];
    }
    return issue.keys.map((key, i) => {
      const path = [...issue.path, key];
      return { path, text: `${pathText(path)}: ${(lines[i] ?? "").slice(key.length + 2)}` };
    });
  });
}

/**
 * The error map (zod's per-parse `error` option) that words every issue of `root` a schema
 * has not worded itself; `hints` give the examples of settings that have no default.
 */
export function issueMessages(root: Schema, hints: SettingHints): z.core.$ZodErrorMap {
  return (issue) => messageOf(issue, root, hints);
}

function messageOf(issue: RawIssue, root: Schema, hints: SettingHints): string {
  const path = issue.path ?? [];
  const setting = describeSetting(root, path, hints, issue.inst);
  switch (issue.code) {
    case "invalid_type": {
      const what = setting.expects(issue.expected);
      return issue.input === undefined ? `is required: ${what}` : `must be ${what}`;
    }
    case "invalid_value":
      return `must be ${oneOf(issue.values)}`;
    case "too_small":
      return `must be ${bound(issue.origin, "at least", "more than", issue.minimum, issue.inclusive)}`;
    case "too_big":
      return `must be ${bound(issue.origin, "at most", "less than", issue.maximum, issue.inclusive)}`;
    case "invalid_format":
      if (issue.format === "url") return `must be ${setting.expects("url")}`;
      return setting.hinted ? `must be ${setting.expects("string")}` : setting.malformed;
    case "not_multiple_of":
      return `must be a multiple of ${issue.divisor}`;
    case "unrecognized_keys": {
      const known = keysOf(issue.inst as Schema | undefined);
      return issue.keys
        .map((key) => `${key}: ${unknownKey(key, known, path, settingPaths(root))}`)
        .join("\n");
    }
    case "invalid_union":
      return `must be ${setting.expects("union")}`;
    case "invalid_key":
      return `is not an accepted name: it ${issue.issues.map((i) => i.message).join("; ")}`;
    case "invalid_element":
    case "custom":
      return setting.malformed;
  }
}

/** What the setting at `path` expects, as the sentences of its problems say it. */
function describeSetting(
  root: Schema,
  path: readonly PropertyKey[],
  hints: SettingHints,
  inst: unknown,
): { hinted: boolean; expects: (kind: string) => string; malformed: string } {
  const hint = hintAt(hints, path);
  const schema = path.length === 0 ? undefined : schemaAt(root, path);
  const duration = isDuration(inst) || (schema !== undefined && isDuration(unwrap(schema).schema));
  const example = hint?.example ?? defaultExample(schema, duration);
  const withExample = (what: string) =>
    example === undefined ? what : `${what}, for example ${example}`;
  return {
    hinted: hint?.expects !== undefined,
    expects: (kind) => {
      const what = hint?.expects ?? (duration ? DURATION : typeExpectation(kind, inst));
      // The values accepted, or the settings a section takes, are their own example.
      const selfExplaining =
        kind === "boolean" || what.startsWith("one of") || what.startsWith("a mapping of settings");
      return selfExplaining ? what : withExample(what);
    },
    malformed: example === undefined ? "is not valid here" : `is not valid; for example ${example}`,
  };
}

/** `at least 1`, `at most 500 characters`, `more than 0`, `at least 1 item`. */
function bound(
  origin: string,
  inclusiveWord: string,
  exclusiveWord: string,
  limit: number | bigint,
  inclusive: boolean | undefined,
): string {
  const word = inclusive === false ? exclusiveWord : inclusiveWord;
  const n = Number(limit);
  if (origin === "string") {
    return n === 1 && word === "at least"
      ? "a text that is not empty"
      : `${word} ${limit} character${n === 1 ? "" : "s"} long`;
  }
  if (origin === "array" || origin === "set") {
    return n === 1 && word === "at least"
      ? "a list of at least one item"
      : `a list of ${word} ${limit} item${n === 1 ? "" : "s"}`;
  }
  return `${word} ${limit}`;
}

/** `one of trace, debug, info`, or the one value accepted. */
function oneOf(values: readonly unknown[]): string {
  const shown = values.map((v) => (typeof v === "string" ? v : JSON.stringify(v)));
  return shown.length === 1 ? (shown[0] ?? "") : `one of ${shown.join(", ")}`;
}

const DURATION = 'a duration: seconds, or a text such as "30s", "5m" or "1h30m"';

function typeExpectation(kind: string, inst: unknown): string {
  switch (kind) {
    case "string":
      return isUrl(inst) ? "an http(s) URL" : "a string";
    case "number":
      return "a number";
    case "int":
      return "a whole number";
    case "boolean":
      return "true or false";
    case "array":
      return "a list";
    case "url":
      return "an http(s) URL";
    case "object": {
      const keys = keysOf(inst as Schema | undefined);
      return keys.length === 0 ? "a mapping" : `a mapping of settings: ${keys.join(", ")}`;
    }
    case "record":
      return "a mapping of names to values";
    default: {
      const values = enumValues(inst as Schema | undefined);
      return values === undefined ? "a value of another form" : oneOf(values);
    }
  }
}

/** The default of the setting, written as it would be in the file. */
function defaultExample(setting: Schema | undefined, duration: boolean): string | undefined {
  if (setting === undefined) return undefined;
  const value = unwrap(setting).defaultValue;
  if (duration && typeof value === "number") return `"${durationText(value)}"`;
  if (typeof value === "string" || typeof value === "number") return JSON.stringify(value);
  return undefined;
}

/** 90 → `1m30s`, 3600 → `1h`, 0.5 → `500ms`. */
export function durationText(seconds: number): string {
  if (seconds === 0) return "0s";
  if (seconds < 1) return `${Math.round(seconds * 1000)}ms`;
  const units: [string, number][] = [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ];
  let rest = Math.round(seconds);
  let text = "";
  for (const [unit, size] of units) {
    const n = Math.floor(rest / size);
    if (n > 0) text += `${n}${unit}`;
    rest -= n * size;
  }
  return text;
}

/** The hint of the setting at `path`, or of any entry of the mapping it is in (`labels.*`). */
function hintAt(hints: SettingHints, path: readonly PropertyKey[]): SettingHint | undefined {
  const exact = hints[hintKey(path)];
  if (exact !== undefined || path.length === 0) return exact;
  return hints[hintKey([...path.slice(0, -1), "*"])];
}

/** The hint key of a path: its names, with `[]` for each list index. */
function hintKey(path: readonly PropertyKey[]): string {
  return path
    .map((p, i) => (typeof p === "number" ? "[]" : i === 0 ? String(p) : `.${String(p)}`))
    .join("");
}

/**
 * What to say of an unknown key: the known key (or setting elsewhere) it is closest to, or
 * the keys accepted here.
 */
export function unknownKey(
  key: string,
  known: readonly string[],
  parent: readonly PropertyKey[],
  elsewhere: readonly string[] = [],
): string {
  const sibling = closest(key, known);
  if (sibling !== undefined)
    return `unknown setting; did you mean ${pathText([...parent, sibling])}?`;
  const other = elsewhere.find((p) => {
    const last = p.slice(p.lastIndexOf(".") + 1);
    return last.toLowerCase() === key.toLowerCase() || editDistance(last, key) <= 1;
  });
  if (other !== undefined) return `unknown setting here; did you mean ${other}?`;
  if (known.length === 0) return "unknown setting";
  const where = parent.length === 0 ? "the top level" : pathText(parent);
  return `unknown setting (${where} takes ${known.join(", ")})`;
}

// --- Reading the schema: what a setting is, its default, the keys of a section ---

/** The schema's definition, as one of zod's kinds of schema. */
function defOf(schema: Schema): z.core.$ZodTypes["_zod"]["def"] {
  return (schema as z.core.$ZodTypes)._zod.def;
}

/**
 * The schema under its wrappers (optional, default, …; a pipe's input side), with the first
 * default found on the way.
 */
function unwrap(schema: Schema): { schema: Schema; defaultValue: unknown } {
  let current = schema;
  let defaultValue: unknown;
  for (;;) {
    const def = defOf(current);
    if (def.type === "default" && defaultValue === undefined) defaultValue = def.defaultValue;
    if (
      def.type === "optional" ||
      def.type === "default" ||
      def.type === "prefault" ||
      def.type === "nullable" ||
      def.type === "readonly" ||
      def.type === "catch" ||
      def.type === "nonoptional"
    ) {
      current = def.innerType;
    } else if (def.type === "pipe" && !isDuration(current)) {
      current = def.in;
    } else {
      return { schema: current, defaultValue };
    }
  }
}

/** A URL setting (`z.url()`). */
function isUrl(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null || !("_zod" in schema)) return false;
  const def = defOf(schema as Schema);
  return def.type === "string" && "format" in def && def.format === "url";
}

/** A duration setting: `durationSchema`, maybe refined, or the union it reads. */
function isDuration(schema: unknown): boolean {
  if (typeof schema !== "object" || schema === null || !("_zod" in schema)) return false;
  const def = defOf(schema as Schema);
  return schema === durationInput || (def.type === "pipe" && def.in === durationInput);
}

/** The schema of the setting `key` (a name, or a list index) under `schema`. */
function childOf(schema: Schema, key: PropertyKey): Schema | undefined {
  const inner = unwrap(schema).schema;
  const def = defOf(inner);
  switch (def.type) {
    case "object":
      return typeof key === "string" ? def.shape[key] : undefined;
    case "array":
      return typeof key === "number" ? def.element : undefined;
    case "record":
      return def.valueType;
    case "union":
      for (const option of def.options) {
        const found = childOf(option, key);
        if (found !== undefined) return found;
      }
      return undefined;
    default:
      return undefined;
  }
}

function schemaAt(root: Schema, path: readonly PropertyKey[]): Schema | undefined {
  let schema: Schema | undefined = root;
  for (const key of path) {
    if (schema === undefined) return undefined;
    schema = childOf(schema, key);
  }
  return schema;
}

/** The keys a section takes (an object's, a record's fixed names, a union's together). */
function keysOf(schema: Schema | undefined): string[] {
  if (schema === undefined) return [];
  const def = defOf(unwrap(schema).schema);
  switch (def.type) {
    case "object":
      return Object.keys(def.shape);
    case "record":
      return enumValues(def.keyType)?.map(String) ?? [];
    case "union":
      return [...new Set(def.options.flatMap(keysOf))];
    default:
      return [];
  }
}

function enumValues(schema: Schema | undefined): unknown[] | undefined {
  if (schema === undefined) return undefined;
  const def = defOf(unwrap(schema).schema);
  if (def.type === "enum") return Object.values(def.entries);
  if (def.type === "literal") return def.values;
  return undefined;
}

const pathsCache = new WeakMap<Schema, string[]>();

/** Every setting's dotted path through the sections (not into lists), for suggestions. */
function settingPaths(root: Schema): string[] {
  const cached = pathsCache.get(root);
  if (cached !== undefined) return cached;
  const out: string[] = [];
  const walk = (schema: Schema, prefix: string) => {
    const def = defOf(unwrap(schema).schema);
    if (def.type !== "object") return;
    for (const [key, child] of Object.entries(def.shape)) {
      const path = prefix === "" ? key : `${prefix}.${key}`;
      out.push(path);
      walk(child, path);
    }
  };
  walk(root, "");
  pathsCache.set(root, out);
  return out;
}

// --- YAML ---

/**
 * The document `text` holds, or its syntax errors: each with its line and column, and the
 * offending line under it with a caret at the column.
 */
export function readYaml(
  text: string,
): { ok: true; value: unknown } | { ok: false; problems: string[] } {
  const lines = new LineCounter();
  const doc = parseDocument(text, { lineCounter: lines, prettyErrors: false });
  if (doc.errors.length > 0) {
    return { ok: false, problems: doc.errors.map((e) => yamlProblem(e, text, lines)) };
  }
  try {
    return { ok: true, value: doc.toJS() as unknown };
  } catch (cause) {
    return { ok: false, problems: [`not valid YAML: ${firstLine(cause)}`] };
  }
}

function yamlProblem(error: YAMLError, text: string, lines: LineCounter): string {
  const { line, col } = lines.linePos(error.pos[0]);
  const reason = firstLine(error);
  const head = `not valid YAML at line ${line}, column ${col}: ${reason.charAt(0).toLowerCase()}${reason.slice(1)}`;
  const source = text.split(/\r?\n/)[line - 1];
  if (source === undefined || source.trim() === "") return head;
  const number = String(line);
  return [
    head,
    `${number} | ${source}`,
    `${" ".repeat(number.length)} | ${" ".repeat(Math.max(0, col - 1))}^`,
  ].join("\n");
}

function firstLine(cause: unknown): string {
  const message = cause instanceof Error ? cause.message : String(cause);
  return message.split("\n")[0] ?? "";
}
