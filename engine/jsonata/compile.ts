import { registerStepwiseFunctions } from "./functions.js";
import { jsonataLimits, onJsonataLimitsChange } from "./limits.js";
import { Re2RegExp, withRegexMeter } from "./regex.js";
import {
  jsonata,
  METER_BINDING,
  type CompiledJsonata,
  type JsonataError,
  type JsonataOptions,
  type Meter,
} from "./runtime.js";

/**
 * Each expression is parsed once per process and reused: parsing costs several
 * times the evaluation of a typical expression. Keyed by the expression text, so
 * every definition (and every version) that repeats an expression shares it. A
 * text that does not parse is remembered with its error. Bounded: a compiled
 * expression holds ~28 KiB (jsonata's AST and frames), so past CACHE_LIMIT
 * entries (~56 MiB) the oldest half is dropped.
 */
type Entry = { ok: true; compiled: CompiledJsonata } | { ok: false; error: JsonataError };

const CACHE_LIMIT = 2_000;
const cache = new Map<string, Entry>();

onJsonataLimitsChange(() => cache.clear());

/**
 * One evaluation step of jsonata can do work in proportion to the data: build a
 * whole sequence (`[1..$n]`, a path over a long array) or run a built-in over a
 * long string or array (`$length`, `$uppercase`, `$append`). Counting steps alone
 * let `$reduce([1..1e5], function($a, $b){ $count([1..$b]) })` run for minutes
 * within its budget, so the meter is also charged one step per 64 elements of
 * every sequence a step builds, and per 64 elements or characters of every
 * argument and result of a built-in. References to data cost nothing.
 */
const UNITS_PER_STEP = 64;

function size(value: unknown): number {
  return typeof value === "string" || Array.isArray(value) ? value.length : 0;
}

function options(): JsonataOptions {
  const limits = jsonataLimits();
  const tooLong = {
    message: `A string built during evaluation exceeded ${limits.maxStringLength} characters, the Stepwise limit.`,
  };
  return {
    steps: limits.maxSteps,
    stack: limits.maxDepth,
    sequence: limits.maxSequenceLength,
    checkResult(value: unknown, meter: Meter): void {
      if (typeof value === "string") {
        if (value.length > limits.maxStringLength) throw { ...tooLong };
      } else if (Array.isArray(value)) {
        if (value.length > limits.maxSequenceLength)
          throw { code: "D2015", value: limits.maxSequenceLength };
        if ((value as { sequence?: boolean }).sequence === true)
          meter.steps += Math.floor(value.length / UNITS_PER_STEP);
      }
    },
    chargeCall(args: unknown[], result: unknown, meter: Meter): void {
      let units = size(result);
      for (const arg of args) units += size(arg);
      meter.steps += Math.floor(units / UNITS_PER_STEP);
    },
    // Linear-time regular expressions, charged to the meter (regex.ts).
    RegexEngine: Re2RegExp,
  };
}

/** The compiled form of `expression` (the text inside `{% %}`); throws its JsonataError. */
export function compileExpression(expression: string): CompiledJsonata {
  let entry = cache.get(expression);
  if (entry === undefined) {
    entry = compile(expression);
    if (cache.size >= CACHE_LIMIT) {
      let drop = cache.size / 2;
      for (const key of cache.keys()) {
        if (drop-- <= 0) break;
        cache.delete(key);
      }
    }
    cache.set(expression, entry);
  }
  if (!entry.ok) throw entry.error;
  return entry.compiled;
}

function compile(expression: string): Entry {
  try {
    const compiled = jsonata(expression, options());
    registerStepwiseFunctions(compiled, expression);
    return { ok: true, compiled: metered(compiled) };
  } catch (e) {
    if (e instanceof RangeError) return { ok: false, error: { message: e.message } };
    if (typeof e === "object" && e !== null && !(e instanceof Error))
      return { ok: false, error: e as JsonataError };
    throw e;
  }
}

/**
 * Evaluations that charge their regular expressions' searches to the meter of the
 * evaluation (the binding jsonata counts its own steps on).
 */
function metered(compiled: CompiledJsonata): CompiledJsonata {
  const evaluate = compiled.evaluate.bind(compiled);
  compiled.evaluate = (input, bindings) => {
    let meter = bindings[METER_BINDING] as Meter | undefined;
    if (meter === undefined) {
      meter = { steps: 0 };
      bindings = { ...bindings, [METER_BINDING]: meter };
    }
    return withRegexMeter(meter, jsonataLimits().maxSteps, () => evaluate(input, bindings));
  };
  return compiled;
}

/** How many expressions are cached (for tests and metrics). */
export function compiledExpressionCount(): number {
  return cache.size;
}
