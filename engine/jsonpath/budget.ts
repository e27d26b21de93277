import { StatesError } from "../core/errors.js";
import { inlineSlice, SliceExceeded } from "../core/step-slice.js";
import type { Json } from "../core/json.js";

/**
 * What evaluating one JSONPath may cost. Jayway's deep scan (`..`) applies the rest
 * of the path to every descendant and keeps every match, duplicates included (its
 * EvaluationContextImpl.addResult appends each one), so each further `..` multiplies
 * the work and the result: `$..a..a..a` on `{"a":{"a":…}}` nested 250 deep (4.5 KB)
 * selects 2.6 million nodes after visiting 160 million, and their JSON is gigabytes.
 * Evaluation stops instead, with States.Runtime, once either bound is passed:
 *
 * - `maxVisits` nodes visited (each node a segment is applied to, each node a scan
 *   walks, each match kept, one per 64 characters a filter's regex reads). A
 *   state's data is at most 256 KiB, about 130,000 nodes at the very most, so a
 *   path can deep-scan it several times over; a million visits take ~100 ms, so
 *   the worst path holds a worker (and the API of `serve`) for about that long.
 *   (A payload read by reference may be larger, up to 10 MiB: deep scans over the
 *   largest of those can pass the bound, definite paths into them never do.)
 * - `maxResultChars` characters of JSON in an indefinite path's result (the list
 *   of matches, each counted in full): twice the largest payload a step reads by
 *   reference, and far from V8's string limit (~512 MiB), where serializing the
 *   result would throw a RangeError.
 */
export interface PathLimits {
  maxVisits: number;
  maxResultChars: number;
}

export const DEFAULT_PATH_LIMITS: Readonly<PathLimits> = Object.freeze({
  maxVisits: 1_000_000,
  maxResultChars: 20 * 1024 * 1024,
});

let current: Readonly<PathLimits> = DEFAULT_PATH_LIMITS;

export function pathLimits(): Readonly<PathLimits> {
  return current;
}

/** Changes the limits for this process (tests; a driver at startup). */
export function configurePathLimits(limits: Partial<PathLimits>): void {
  current = Object.freeze({ ...current, ...limits });
}

/** A path that needs more than the limits allow: States.Runtime, as for a path that cannot be read. */
export class PathLimitExceeded extends StatesError {
  constructor(
    readonly path: string,
    reason: string,
  ) {
    super("States.Runtime", `Invalid path '${path}' : ${reason}`);
  }
}

/** The work of one path evaluation, shared by its filters' paths. */
export class PathBudget {
  private visits = 0;
  private readonly limit = current.maxVisits;
  /** Where this thread evaluates a slice only (core/step-slice.ts), the visits it may make here. */
  private readonly slice = inlineSlice()?.pathVisits ?? Infinity;

  constructor(private readonly path: string) {}

  charge(visits: number): void {
    this.visits += visits;
    if (this.visits > this.slice && this.visits <= this.limit)
      throw new SliceExceeded(`JSONPath '${this.path}'`);
    if (this.visits > this.limit) {
      throw new PathLimitExceeded(
        this.path,
        `evaluating it visited more than ${this.limit} nodes, the most Stepwise visits for one path`,
      );
    }
  }

  /** Refuses a list of matches whose JSON would be longer than the limit. */
  checkResult(matches: readonly Json[]): void {
    const limit = current.maxResultChars;
    if (jsonLengthExceeds(matches, limit)) {
      throw new PathLimitExceeded(
        this.path,
        `its result would have more than ${limit} characters of JSON, the most Stepwise builds for one path`,
      );
    }
    // A result this large is cheap to build (it shares subtrees) and slow to write out
    // as the state's JSON: that happens on the evaluation thread (core/step-slice.ts).
    const slice = inlineSlice();
    if (slice && jsonLengthExceeds(matches, slice.pathResultChars))
      throw new SliceExceeded(`JSONPath '${this.path}' result`);
  }
}

/**
 * Whether `JSON.stringify(values)` would be longer than `limit` (strings counted
 * without their escapes). Each distinct object is measured once, iteratively (a
 * match list repeats the same subtrees many times, and documents may be deep).
 */
export function jsonLengthExceeds(values: readonly Json[], limit: number): boolean {
  const sizes = new Map<object, number>();
  let total = punctuation(values.length);
  for (const value of values) {
    total += sizeOf(value, sizes, limit);
    if (total > limit) return true;
  }
  return false;
}

function scalarSize(value: Json): number {
  if (typeof value === "string") return value.length + 2;
  if (typeof value === "number") return String(value).length;
  if (typeof value === "boolean") return value ? 4 : 5;
  return 4; // null
}

interface Frame {
  node: object;
  children: Json[];
  next: number;
  size: number;
}

/** Brackets and commas: `[]` is 2, `[1,2]` 3 besides its items. */
const punctuation = (items: number) => Math.max(2, 1 + items);

function frame(node: Json[] | { [key: string]: Json }): Frame {
  if (Array.isArray(node)) return { node, children: node, next: 0, size: punctuation(node.length) };
  const keys = Object.keys(node);
  let size = punctuation(keys.length);
  for (const key of keys) size += key.length + 3;
  return { node, children: keys.map((k) => node[k]!), next: 0, size };
}

/** The JSON length of `root`, or Infinity once it is known to pass `limit`. */
function sizeOf(root: Json, sizes: Map<object, number>, limit: number): number {
  if (root === null || typeof root !== "object") return scalarSize(root);
  const known = sizes.get(root);
  if (known !== undefined) return known;
  const stack: Frame[] = [frame(root)];
  for (;;) {
    const top = stack[stack.length - 1]!;
    if (top.next < top.children.length) {
      const child = top.children[top.next++]!;
      if (child !== null && typeof child === "object") {
        const size = sizes.get(child);
        if (size === undefined) {
          stack.push(frame(child));
          continue;
        }
        top.size += size;
      } else {
        top.size += scalarSize(child);
      }
      if (top.size > limit) return Infinity;
      continue;
    }
    sizes.set(top.node, top.size);
    stack.pop();
    const parent = stack[stack.length - 1];
    if (parent === undefined) return top.size;
    parent.size += top.size;
    if (parent.size > limit) return Infinity;
  }
}
