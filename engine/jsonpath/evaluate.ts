import { readInto } from "../core/payload-ref.js";
import type { Json, JsonObject } from "../core/json.js";
import { isJsonObject } from "../core/json.js";
import type { PathExpr, PathRoot, Segment } from "./ast.js";
import { PathBudget } from "./budget.js";
import { testFilter } from "./filter.js";
import { applyPathFunction } from "./functions.js";
import { parsePath } from "./parse.js";

/** Where `$`, `$$` and `$name` point. */
export type PathScope = {
  input: Json;
  context: Json;
  variables: Readonly<Record<string, Json>>;
};

export type PathResult = { found: true; value: Json } | { found: false };

/** One shared miss, so that reading an absent path allocates nothing. */
const NOT_FOUND: PathResult = Object.freeze({ found: false });

const hasOwn = (obj: JsonObject, key: string): boolean =>
  Object.prototype.hasOwnProperty.call(obj, key);

/**
 * Reads a path with Jayway semantics: a definite path gives its node (or
 * found:false when absent); an indefinite one (wildcard, filter, slice, deep
 * scan, union) gives the array of its matches, possibly empty. An indefinite path
 * is evaluated within the bounds of budget.ts, past which it throws
 * PathLimitExceeded (States.Runtime).
 */
export function readPath(text: string, scope: PathScope): PathResult {
  return evaluatePath(parsePath(text), scope);
}

export function evaluatePath(expr: PathExpr, scope: PathScope): PathResult {
  const root = rootValue(expr.root, scope);
  if (root === undefined) return NOT_FOUND;
  if (expr.definite) {
    const value = walkDefinite(expr.segments, root);
    return value === undefined ? NOT_FOUND : { found: true, value };
  }
  return evaluateIndefinite(expr, root);
}

/**
 * `evaluatePath` as the value itself, undefined when the path selects nothing (a
 * JSON value is never undefined). Allocates nothing for a definite path: payload
 * templates and Choice rules read paths on every transition.
 */
export function pathValue(expr: PathExpr, scope: PathScope): Json | undefined {
  const root = rootValue(expr.root, scope);
  if (root === undefined) return undefined;
  if (expr.definite) return walkDefinite(expr.segments, root);
  const result = evaluateIndefinite(expr, root);
  return result.found ? result.value : undefined;
}

/** The document a root names; undefined for an unknown variable. */
export function rootValue(root: PathRoot, scope: PathScope): Json | undefined {
  switch (root.kind) {
    case "input":
      return scope.input;
    case "context":
      return scope.context;
    case "variable":
      return Object.prototype.hasOwnProperty.call(scope.variables, root.name)
        ? scope.variables[root.name]
        : undefined;
  }
}

/** A whole indefinite path, under a budget of its own; its list of matches is size-checked. */
function evaluateIndefinite(expr: PathExpr, root: Json): PathResult {
  const budget = new PathBudget(expr.text);
  const result = evaluateSegments(expr.segments, false, root, root, budget);
  if (result.found && Array.isArray(result.value)) budget.checkResult(result.value);
  return result;
}

/**
 * Evaluates segments from `start`; `document` is what `$` means inside filters.
 * `budget` counts the work of the whole path (its filters' paths included).
 */
export function evaluateSegments(
  segments: readonly Segment[],
  definite: boolean,
  start: Json,
  document: Json,
  budget: PathBudget,
): PathResult {
  if (definite) {
    const value = walkDefinite(segments, start);
    return value === undefined ? NOT_FOUND : { found: true, value };
  }
  let nodes: Json[] = [start];
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const segment = segments[i]!;
    if (segment.kind === "function") {
      // Jayway: a function at the tail takes the path's result, here the list of matches.
      const value = applyPathFunction(segment.name, nodes);
      return value === undefined ? NOT_FOUND : { found: true, value };
    }
    const next: Json[] = [];
    budget.charge(nodes.length);
    for (const node of nodes) applySegment(segment, node, i === last, document, next, budget);
    budget.charge(next.length);
    nodes = next;
  }
  return { found: true, value: nodes };
}

/** A definite path's node, or undefined; the hot path, so it allocates nothing. */
function walkDefinite(segments: readonly Segment[], start: Json): Json | undefined {
  let current = start;
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const next = stepDefinite(segments[i]!, current, i === last);
    if (next === undefined) return undefined;
    current = next;
  }
  return current;
}

function stepDefinite(segment: Segment, current: Json, isLast: boolean): Json | undefined {
  // A payload stored by reference is read through (core/payload-ref.ts).
  current = readInto(current, segment.kind === "property" ? segment.name : undefined);
  switch (segment.kind) {
    case "property":
      return isJsonObject(current) && hasOwn(current, segment.name)
        ? current[segment.name]
        : undefined;
    case "index":
      return Array.isArray(current)
        ? current[normalizeIndex(segment.index, current.length)]
        : undefined;
    case "properties":
      return isLast && isJsonObject(current) ? mergeProperties(current, segment.names) : undefined;
    case "function":
      return applyPathFunction(segment.name, current);
    default:
      return undefined;
  }
}

function normalizeIndex(index: number, length: number): number {
  return index < 0 ? length + index : index;
}

/** Jayway: `['a','b']` as the last token yields one object holding the present ones. */
function mergeProperties(obj: JsonObject, names: readonly string[]): JsonObject {
  const merged: JsonObject = {};
  for (const name of names) {
    if (hasOwn(obj, name))
      Object.defineProperty(merged, name, {
        value: obj[name],
        enumerable: true,
        writable: true,
        configurable: true,
      });
  }
  return merged;
}

function applySegment(
  segment: Segment,
  node: Json,
  isLast: boolean,
  document: Json,
  out: Json[],
  budget: PathBudget,
): void {
  node = readInto(node, segment.kind === "property" ? segment.name : undefined);
  switch (segment.kind) {
    case "property":
      if (isJsonObject(node) && hasOwn(node, segment.name)) out.push(node[segment.name]!);
      return;
    case "properties":
      if (!isJsonObject(node)) return;
      if (isLast) {
        out.push(mergeProperties(node, segment.names));
        return;
      }
      for (const name of segment.names) if (hasOwn(node, name)) out.push(node[name]!);
      return;
    case "index":
      if (Array.isArray(node)) {
        const index = normalizeIndex(segment.index, node.length);
        if (index >= 0 && index < node.length) out.push(node[index]!);
      }
      return;
    case "indexes":
      if (Array.isArray(node)) {
        for (const raw of segment.indexes) {
          const index = normalizeIndex(raw, node.length);
          if (index >= 0 && index < node.length) out.push(node[index]!);
        }
      }
      return;
    case "wildcard":
      if (Array.isArray(node)) for (const item of node) out.push(item);
      else if (isJsonObject(node)) for (const key of Object.keys(node)) out.push(node[key]!);
      return;
    case "slice":
      // Jayway's slices clamp to the array and count negative bounds from the end, as Array.slice does.
      if (Array.isArray(node))
        for (const item of node.slice(segment.start ?? 0, segment.end ?? node.length))
          out.push(item);
      return;
    case "filter":
      if (Array.isArray(node)) {
        for (const item of node)
          if (testFilter(segment.predicate, item, document, budget)) out.push(item);
      } else if (isJsonObject(node) && testFilter(segment.predicate, node, document, budget)) {
        // Jayway applies a filter on an object to the object itself.
        out.push(node);
      }
      return;
    case "scan":
      scan(segment.target, node, isLast, document, out, budget);
      return;
    case "function":
      return;
  }
}

/**
 * `..target`: the target applied to this node and every descendant, in
 * document order (pre-order), as Jayway's ScanPathToken walks. A filter target
 * selects among the children of each node.
 */
function scan(
  target: Segment,
  node: Json,
  isLast: boolean,
  document: Json,
  out: Json[],
  budget: PathBudget,
): void {
  budget.charge(1);
  if (target.kind === "filter") {
    const children = Array.isArray(node) ? node : isJsonObject(node) ? Object.values(node) : [];
    for (const child of children)
      if (testFilter(target.predicate, child, document, budget)) out.push(child);
  } else if (Array.isArray(node) || isJsonObject(node)) {
    applySegment(target, node, isLast, document, out, budget);
  }
  if (Array.isArray(node)) {
    for (const child of node) scan(target, child, isLast, document, out, budget);
  } else if (isJsonObject(node)) {
    for (const key of Object.keys(node)) scan(target, node[key]!, isLast, document, out, budget);
  }
}
