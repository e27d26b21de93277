import type { Json } from "../../../engine/core/json.js";

/**
 * EventBridge event patterns, as the EventBridge User Guide documents them
 * (https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-event-patterns.html and
 * https://docs.aws.amazon.com/eventbridge/latest/userguide/eb-create-pattern-operators.html).
 * Pure: `checkPattern` says what is malformed (with a JSON pointer into the
 * pattern), `matches` whether an event matches.
 *
 * Semantics (those of aws/event-ruler, which EventBridge runs):
 * - A pattern is an object whose keys follow the event's structure; a key maps to
 *   a nested pattern or to an array of match values. All keys must match (and);
 *   any value of an array may (or). `$or` at any level takes patterns, any of which
 *   may match.
 * - Arrays in the event are flattened: a field matches when any of its values (at
 *   any depth of arrays) matches any of the pattern's values.
 * - A value is matched exactly (strings, numbers by value, true/false/null), or by
 *   an operator: `prefix`, `suffix` (each also as `{equals-ignore-case: …}`),
 *   `equals-ignore-case`, `wildcard` (`*` any run, `\*` a star), `anything-but`
 *   (a value, a list, or `prefix`/`suffix`/`equals-ignore-case`/`wildcard`),
 *   `numeric` (`[">", 0, "<=", 5]`, `["=", 3]`), `exists` (true: the field is
 *   there as a value, not an object; false: it is not there), `cidr` (IPv4).
 * - A field the event does not have matches only `exists: false`.
 */

export type EventPattern = { [key: string]: Json };

export interface PatternProblem {
  /** JSON pointer into the pattern. */
  pointer: string;
  message: string;
}

const NUMERIC_OPS = new Set(["<", "<=", "=", ">", ">="]);

/** Problems of a pattern (empty: it is well formed). */
export function checkPattern(pattern: unknown): PatternProblem[] {
  const problems: PatternProblem[] = [];
  if (!isObject(pattern)) {
    problems.push({ pointer: "", message: "an event pattern is a JSON object" });
    return problems;
  }
  checkObject(pattern, "", problems);
  return problems;
}

function checkObject(pattern: Record<string, Json>, at: string, problems: PatternProblem[]): void {
  const keys = Object.keys(pattern);
  if (keys.length === 0)
    problems.push({ pointer: at, message: "a pattern object must not be empty" });
  for (const key of keys) {
    const value = pattern[key]!;
    const where = `${at}/${escapePointer(key)}`;
    if (key === "$or") {
      if (!Array.isArray(value) || value.length < 1 || !value.every(isObject)) {
        problems.push({ pointer: where, message: "$or takes an array of patterns (objects)" });
      } else
        value.forEach((alt, i) =>
          checkObject(alt as Record<string, Json>, `${where}/${i}`, problems),
        );
    } else if (isObject(value)) checkObject(value, where, problems);
    else if (Array.isArray(value)) {
      if (value.length === 0)
        problems.push({ pointer: where, message: "a list of match values must not be empty" });
      value.forEach((item, i) => checkMatcher(item, `${where}/${i}`, problems));
    } else {
      problems.push({
        pointer: where,
        message: "a pattern field is an object or an array of match values",
      });
    }
  }
}

function checkMatcher(item: Json, at: string, problems: PatternProblem[]): void {
  if (!isObject(item)) {
    if (Array.isArray(item))
      problems.push({ pointer: at, message: "a match value is not an array" });
    return;
  }
  const keys = Object.keys(item);
  if (keys.length !== 1) {
    problems.push({
      pointer: at,
      message: "a match operator is an object of exactly one operator",
    });
    return;
  }
  const op = keys[0]!;
  const arg = item[op]!;
  const where = `${at}/${escapePointer(op)}`;
  const fail = (message: string) => problems.push({ pointer: where, message });
  switch (op) {
    case "prefix":
    case "suffix":
      if (!isString(arg) && !isIgnoreCase(arg))
        fail(`${op} takes a string or {"equals-ignore-case": string}`);
      return;
    case "equals-ignore-case":
    case "wildcard":
      if (!isString(arg)) fail(`${op} takes a string`);
      return;
    case "exists":
      if (typeof arg !== "boolean") fail("exists takes true or false");
      return;
    case "cidr":
      if (!isString(arg) || !parseCidr(arg)) fail("cidr takes an IPv4 block like 10.0.0.0/24");
      return;
    case "numeric": {
      if (!Array.isArray(arg) || arg.length === 0 || arg.length % 2 !== 0 || arg.length > 4) {
        fail('numeric takes operator/number pairs, like [">", 0, "<=", 5]');
        return;
      }
      for (let i = 0; i < arg.length; i += 2) {
        if (
          !isString(arg[i]) ||
          !NUMERIC_OPS.has(arg[i] as string) ||
          typeof arg[i + 1] !== "number"
        )
          fail(
            `numeric: '${JSON.stringify(arg[i])}' ${JSON.stringify(arg[i + 1])} is not an operator (<, <=, =, >, >=) and a number`,
          );
      }
      return;
    }
    case "anything-but": {
      if (isString(arg) || typeof arg === "number") return;
      if (Array.isArray(arg)) {
        if (arg.length === 0 || !(arg.every(isString) || arg.every((v) => typeof v === "number")))
          fail("anything-but takes a list of strings or a list of numbers");
        return;
      }
      if (isObject(arg) && Object.keys(arg).length === 1) {
        const [inner] = Object.keys(arg) as [string];
        const v = arg[inner]!;
        const list = Array.isArray(v) ? v : [v];
        if (
          ["prefix", "suffix", "equals-ignore-case", "wildcard"].includes(inner) &&
          list.length > 0 &&
          list.every(isString)
        )
          return;
      }
      fail(
        "anything-but takes a value, a list, or one of prefix, suffix, equals-ignore-case, wildcard",
      );
      return;
    }
    default:
      problems.push({ pointer: at, message: `'${op}' is not an EventBridge pattern operator` });
  }
}

/** Whether `event` matches `pattern` (a pattern `checkPattern` accepts). */
export function matches(pattern: EventPattern, event: Json): boolean {
  return matchObject(pattern, [event]);
}

/** `contexts`: the objects (after flattening arrays) the pattern's keys are looked up in. */
function matchObject(pattern: Record<string, Json>, contexts: Json[]): boolean {
  for (const [key, value] of Object.entries(pattern)) {
    if (key === "$or") {
      if (!(value as Json[]).some((alt) => matchObject(alt as Record<string, Json>, contexts)))
        return false;
      continue;
    }
    const values = flatten(contexts.flatMap((c) => (isObject(c) && key in c ? [c[key]!] : [])));
    if (isObject(value)) {
      if (!matchObject(value, values.filter(isObject))) return false;
      continue;
    }
    const leaves = values.filter((v) => !isObject(v));
    if (!(value as Json[]).some((m) => matchLeaf(m, leaves))) return false;
  }
  return true;
}

function flatten(values: Json[]): Json[] {
  return values.flatMap((v) => (Array.isArray(v) ? flatten(v) : [v]));
}

function matchLeaf(matcher: Json, leaves: Json[]): boolean {
  if (!isObject(matcher)) return leaves.some((v) => equal(matcher, v));
  const [op] = Object.keys(matcher) as [string];
  const arg = matcher[op]!;
  if (op === "exists") return arg === true ? leaves.length > 0 : leaves.length === 0;
  return leaves.some((v) => matchOperator(op, arg, v));
}

function matchOperator(op: string, arg: Json, v: Json): boolean {
  switch (op) {
    case "prefix":
      return isString(v) && affix(arg, v, (s, p) => s.startsWith(p));
    case "suffix":
      return isString(v) && affix(arg, v, (s, p) => s.endsWith(p));
    case "equals-ignore-case":
      return isString(v) && v.toLowerCase() === (arg as string).toLowerCase();
    case "wildcard":
      return isString(v) && wildcard(arg as string).test(v);
    case "numeric":
      return typeof v === "number" && numeric(arg as Json[], v);
    case "cidr":
      return isString(v) && inCidr(arg as string, v);
    case "anything-but":
      return anythingBut(arg, v);
    default:
      return false;
  }
}

function affix(arg: Json, v: string, test: (s: string, p: string) => boolean): boolean {
  if (isString(arg)) return test(v, arg);
  const p = (arg as { "equals-ignore-case": string })["equals-ignore-case"];
  return test(v.toLowerCase(), p.toLowerCase());
}

function anythingBut(arg: Json, v: Json): boolean {
  if (!isObject(arg)) {
    const list = Array.isArray(arg) ? arg : [arg];
    return !list.some((x) => equal(x, v));
  }
  const [inner] = Object.keys(arg) as [string];
  const list = [arg[inner]!].flat() as string[];
  if (!isString(v)) return true;
  return !list.some((x) => matchOperator(inner, x, v));
}

function numeric(ops: Json[], v: number): boolean {
  for (let i = 0; i < ops.length; i += 2) {
    const n = ops[i + 1] as number;
    const ok = { "<": v < n, "<=": v <= n, "=": v === n, ">": v > n, ">=": v >= n }[
      ops[i] as string
    ];
    if (!ok) return false;
  }
  return true;
}

function equal(a: Json, b: Json): boolean {
  return a === b;
}

const wildcards = new Map<string, RegExp>();
function wildcard(pattern: string): RegExp {
  let re = wildcards.get(pattern);
  if (!re) {
    let source = "";
    for (let i = 0; i < pattern.length; i++) {
      const c = pattern[i]!;
      if (c === "\\" && pattern[i + 1] === "*") {
        source += "\\*";
        i++;
      } else if (c === "*") source += ".*";
      else source += c.replace(/[.+?^${}()|[\]\\/-]/g, "\\$&");
    }
    re = new RegExp(`^${source}$`, "s");
    wildcards.set(pattern, re);
  }
  return re;
}

function parseIpv4(text: string): number | null {
  const parts = text.split(".");
  if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p) && Number(p) <= 255))
    return null;
  return parts.reduce((acc, p) => acc * 256 + Number(p), 0);
}

function parseCidr(text: string): { base: number; bits: number } | null {
  const [ip, bits] = text.split("/");
  const base = ip === undefined ? null : parseIpv4(ip);
  const n = Number(bits);
  if (base === null || bits === undefined || !/^\d{1,2}$/.test(bits) || n > 32) return null;
  return { base, bits: n };
}

function inCidr(cidr: string, v: string): boolean {
  const block = parseCidr(cidr);
  const ip = parseIpv4(v);
  if (!block || ip === null) return false;
  const size = 2 ** (32 - block.bits);
  return Math.floor(ip / size) === Math.floor(block.base / size);
}

function isObject(v: unknown): v is Record<string, Json> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isString(v: unknown): v is string {
  return typeof v === "string";
}

function isIgnoreCase(v: Json): boolean {
  return isObject(v) && Object.keys(v).length === 1 && isString(v["equals-ignore-case"]);
}

function escapePointer(key: string): string {
  return key.replace(/~/g, "~0").replace(/\//g, "~1");
}
