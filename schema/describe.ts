import { segmentsOf } from "./pointer.js";

/**
 * Names places and values in messages the way a reader of the definition sees them:
 * "state 'Foo'", "Retry[0].ErrorEquals", "the state machine".
 */

/** The field a pointer names, relative to its nearest state: "Retry[0].ErrorEquals". */
export function fieldLabel(pointer: string): string {
  const segments = segmentsOf(pointer);
  const stateAt = lastStateIndex(segments);
  const rest = stateAt >= 0 ? segments.slice(stateAt + 2) : segments;
  if (rest.length === 0)
    return stateAt >= 0 ? `state '${segments[stateAt + 1]}'` : "the state machine";
  let out = "";
  for (const segment of rest) {
    if (/^\d+$/.test(segment) && out !== "") out += `[${segment}]`;
    else out += out === "" ? segment : `.${segment}`;
  }
  return out;
}

/** "state 'Foo'" for pointers inside a state, "the state machine" otherwise. */
export function ownerLabel(pointer: string): string {
  const segments = segmentsOf(pointer);
  const stateAt = lastStateIndex(segments);
  return stateAt >= 0 ? `state '${segments[stateAt + 1]}'` : "the state machine";
}

/** Index of the "States" segment that opens the innermost state on the pointer, or -1. */
function lastStateIndex(segments: readonly string[]): number {
  for (let i = segments.length - 2; i >= 0; i--) {
    if (segments[i] === "States" && opensScope(segments, i)) return i;
  }
  return -1;
}

/** `States` at the top level, in a Map processor or in a Parallel branch (not in a payload). */
function opensScope(segments: readonly string[], i: number): boolean {
  if (i === 0) return true;
  const parent = segments[i - 1];
  if (parent === "ItemProcessor" || parent === "Iterator") return true;
  return segments[i - 2] === "Branches" && /^\d+$/.test(parent ?? "");
}

/** A short rendering of a value for "(got …)". */
export function showValue(value: unknown): string {
  if (value === undefined) return "nothing";
  const text = JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

/** The closest candidate within a small edit distance, for "did you mean …?". */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  const lower = word.toLowerCase().replace(/[\s_-]/g, "");
  for (const candidate of candidates) {
    const c = candidate.toLowerCase();
    const d = c === lower || lower.includes(c) || c.includes(lower) ? 0.5 : distance(lower, c);
    if (d < bestDistance) {
      bestDistance = d;
      best = candidate;
    }
  }
  const limit = Math.max(2, Math.floor(word.length / 3));
  return bestDistance <= limit ? best : undefined;
}

/**
 * The state name a mistyped one most likely meant, for "did you mean …?": the only
 * name within a small edit distance, letter case ignored. Short names get no guess
 * (from "B", any one-letter name is one edit away), and a tie gets none either.
 */
export function nearestName(word: string, names: Iterable<string>): string | undefined {
  const lower = word.toLowerCase();
  let best: string[] = [];
  let bestDistance = Infinity;
  for (const name of names) {
    const limit = Math.min(3, Math.floor(Math.max(word.length, name.length) / 4));
    const d = distance(lower, name.toLowerCase());
    if (d > limit || d > bestDistance) continue;
    if (d < bestDistance) best = [];
    bestDistance = d;
    best.push(name);
  }
  return best.length === 1 ? best[0] : undefined;
}

/** Edit distance (optimal string alignment: a swap of two neighbours is one edit). */
function distance(a: string, b: string): number {
  if (Math.abs(a.length - b.length) > 3) return Infinity;
  let before: number[] = [];
  let prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      let d = Math.min(
        prev[j]! + 1,
        cur[j - 1]! + 1,
        prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        d = Math.min(d, before[j - 2]! + 1);
      }
      cur[j] = d;
    }
    before = prev;
    prev = cur;
  }
  return prev[b.length]!;
}
