import type { Matcher, RE2JS } from "re2js";
import { compileRe2 } from "../core/re2.js";
import { boundedOverhang } from "./regex-cost.js";
import type { Meter } from "./runtime.js";
import { afterSearch, beforeSearch } from "./meter.js";

/**
 * Regular expressions in JSONata (`$match`, `$replace`, `$split`, `$contains` and
 * every regex literal) run on RE2 (core/re2.ts), whose matching time is linear in
 * the text: no pattern can backtrack. JavaScript's RegExp could: `/a*a*a*a*a*b/` on
 * 130 a's ran for 15 s and `$replace` with it on 900,000 a's for minutes, each a
 * single call that no step budget can interrupt. A pattern RE2 cannot run
 * (backreferences, lookaround) fails the expression, States.QueryEvaluationError,
 * with a message naming the construct.
 *
 * jsonata builds each regex through its `RegexEngine` option (`new RegexEngine(re)`
 * for the literal `re`) and searches with `lastIndex` and `exec`, as on a global
 * RegExp; `Re2RegExp` answers the same calls, and charges each search to the step
 * meter (regex-cost.ts).
 */

/** jsonata's view of a RegExp: what `evaluateRegex` uses. */
export interface RegexMatcher {
  lastIndex: number;
  exec(input: string): RegExpExecArray | null;
}

/**
 * Characters a search may read per step of the meter. RE2's slowest engine (the
 * Pike VM, for patterns with captures and alternatives) reads ~40 ns per
 * character, and a step of jsonata's evaluator takes ~0.5 µs: 16 characters per
 * step keep a budget spent on searches about as long as one spent on evaluation
 * (500,000 steps: ~0.3 s).
 */
const CHARS_PER_STEP = 16;

interface Compiled {
  re: RE2JS;
  groups: number;
  /** See boundedOverhang; undefined: each search is charged the rest of the text. */
  overhang: number | undefined;
}

/** Compiled patterns by flags and source: jsonata builds a RegexEngine per evaluation. */
const CACHE_LIMIT = 500;
const cache = new Map<string, Compiled | { refused: string }>();

/**
 * The meter of the evaluation in progress, and its limit (set by compile.ts around
 * each evaluation; evaluation is synchronous, so one at a time).
 */
let active: { meter: Meter; limit: number } | undefined;

export function withRegexMeter<T>(meter: Meter, limit: number, evaluate: () => T): T {
  const outer = active;
  active = { meter, limit };
  try {
    return evaluate();
  } finally {
    active = outer;
  }
}

/** jsonata's RegexEngine: an RE2 pattern answering `lastIndex`/`exec` as a global RegExp does. */
export class Re2RegExp implements RegexMatcher {
  lastIndex = 0;
  private readonly compiled: Compiled;
  private readonly charge: { meter: Meter; limit: number } | undefined = active;
  private input: string | undefined;
  private matcher: Matcher | undefined;

  constructor(pattern: string | RegExp, flags?: string) {
    const source = typeof pattern === "string" ? pattern : pattern.source;
    const f = typeof pattern === "string" ? (flags ?? "") : pattern.flags;
    this.compiled = compile(source, f);
  }

  exec(input: string): RegExpExecArray | null {
    const from = this.lastIndex;
    if (from > input.length) {
      this.lastIndex = 0;
      return null;
    }
    if (this.input !== input || this.matcher === undefined) {
      this.matcher = this.compiled.re.matcher(input);
      this.input = input;
    }
    const m = this.matcher;
    // Where this thread evaluates a slice only, searches that could read past it run
    // on the evaluation thread instead (core/step-slice.ts): one search is one call.
    const charge = active ?? this.charge;
    if (charge) beforeSearch(charge.meter, input.length - from + 1);
    const found = m.find(from);
    const overhang = this.compiled.overhang;
    // See regex-cost.ts: an upper bound of the text this search read.
    const read =
      found && from > 0 && overhang !== undefined
        ? m.end() - from + overhang
        : input.length - from + 1;
    this.meter(read);
    if (!found) {
      this.lastIndex = 0;
      return null;
    }
    const result: Array<string | undefined> = [];
    for (let g = 0; g <= this.compiled.groups; g++) result.push(m.group(g) ?? undefined);
    const array = result as unknown as RegExpExecArray;
    array.index = m.start();
    array.input = input;
    // As a global RegExp: an empty match leaves lastIndex where it is (jsonata then
    // reports D1004, "matches zero length string").
    this.lastIndex = m.end();
    return array;
  }

  private meter(chars: number): void {
    const charge = active ?? this.charge;
    if (charge === undefined) return;
    afterSearch(charge.meter, chars);
    charge.meter.steps += Math.ceil(chars / CHARS_PER_STEP);
    if (charge.limit > 0 && charge.meter.steps > charge.limit) {
      // jsonata's own error for an exhausted budget (its message names the budget).
      throw { code: "D1012", value: charge.limit };
    }
  }
}

function compile(source: string, flags: string): Compiled {
  const key = `${flags}/${source}`;
  let entry = cache.get(key);
  if (entry === undefined) {
    entry = build(source, flags);
    if (cache.size >= CACHE_LIMIT) {
      let drop = cache.size / 2;
      for (const k of cache.keys()) {
        if (drop-- <= 0) break;
        cache.delete(k);
      }
    }
    cache.set(key, entry);
  }
  // A jsonata-shaped error (no code): reported as the expression's evaluation error.
  if ("refused" in entry) throw { message: entry.refused };
  return entry;
}

function build(source: string, flags: string): Compiled | { refused: string } {
  const compiled = compileRe2(source, flags);
  if (!compiled.ok) return { refused: compiled.reason };
  const re = compiled.re;
  return { re, groups: re.groupCount(), overhang: boundedOverhang(source) };
}
