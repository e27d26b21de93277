import { seededRandom, type RandomSource } from "../core/random.js";
import { md5Hex } from "../intrinsics/digest/md5.js";
import { sha1Hex } from "../intrinsics/digest/sha1.js";
import { sha256Hex } from "../intrinsics/digest/sha256.js";
import { sha384Hex, sha512Hex } from "../intrinsics/digest/sha512.js";
import { jsonataLimits } from "./limits.js";
import {
  asSequence,
  builtin,
  type CompiledJsonata,
  type JsonataBuiltin,
  type JsonataFocus,
} from "./runtime.js";
import { jsonFitsWithin } from "./values.js";

/**
 * The functions AWS Step Functions adds to JSONata ("Transforming data with
 * JSONata", functions provided by Step Functions): $partition, $range, $hash,
 * $random (with an optional seed), $uuid, $parse. $eval is not offered (it is
 * removed from the vendored build).
 *
 * The engine is pure, so the functions jsonata bases on the clock or on global randomness
 * are rebound: $now/$millis give the time of the event being processed, and
 * $random/$uuid/$shuffle draw from the execution's seeded, replayable stream.
 */

/** What the functions of one evaluation read, bound under a name no expression can write. */
export interface EvaluationScope {
  random: RandomSource;
  /** Epoch milliseconds of the event being processed. */
  now: number;
}

export const SCOPE_BINDING = "stepwise scope";

function scopeOf(focus: JsonataFocus): EvaluationScope {
  const scope = focus.environment.lookup(SCOPE_BINDING) as EvaluationScope | undefined;
  if (!scope) throw new Error("JSONata evaluated without the Stepwise scope binding");
  return scope;
}

/** An error jsonata reports as the expression's own (`… threw an error during evaluation. <message>`). */
function failure(message: string, code?: string): { code?: string; message: string } {
  return code === undefined ? { message } : { code, message };
}

const HASHES: Readonly<Record<string, (bytes: Uint8Array) => string>> = {
  MD5: md5Hex,
  "SHA-1": sha1Hex,
  "SHA-256": sha256Hex,
  "SHA-384": sha384Hex,
  "SHA-512": sha512Hex,
};

/**
 * AWS ("JSONata functions provided by Step Functions"): "Built-in JSONata functions
 * that require integer values as parameters will automatically round down any
 * non-integer numbers provided."
 */
function roundDown(value: number): number {
  return Number.isFinite(value) ? Math.floor(value) : value;
}

/** $partition(array, size): consecutive chunks of `size` items; the last may be shorter. */
function partition(this: JsonataFocus, array: unknown[], rawSize: number): unknown[] | undefined {
  const size = roundDown(rawSize);
  if (!Number.isInteger(size) || size < 1) {
    throw failure(`The chunk size of $partition must be a positive integer, but was ${size}.`);
  }
  if (array === undefined) return undefined;
  const chunks: unknown[][] = [];
  for (let i = 0; i < array.length; i += size) chunks.push(array.slice(i, i + size));
  return chunks;
}

/**
 * $range(start, end, step): start, start + step, … up to end inclusive. A
 * sequence, so one element comes back as that element (AWS: `$range(1, 9, 9)` is
 * `1`); a range that goes the wrong way is `[]`.
 */
function range(this: JsonataFocus, rawStart: number, rawEnd: number, rawStep = 1): unknown[] {
  const start = roundDown(rawStart);
  const end = roundDown(rawEnd);
  const step = roundDown(rawStep);
  if (step === 0 || !Number.isFinite(step)) {
    throw failure(`The step of $range must be a non-zero number, but was ${step}.`);
  }
  if ((step > 0 && start > end) || (step < 0 && start < end)) return [];
  const length = Math.floor((end - start) / step) + 1;
  const limit = jsonataLimits().maxSequenceLength;
  // jsonata's own error for an oversized sequence ("The maximum sequence length of … was exceeded.")
  if (length > limit) throw { code: "D2015", value: limit };
  const out = new Array<number>(length);
  for (let i = 0; i < length; i++) out[i] = start + i * step;
  return asSequence(out);
}

/** $hash(value, algorithm): lowercase hex of the UTF-8 bytes (the algorithms of States.Hash). */
function hash(this: JsonataFocus, value: string, algorithm = "SHA-256"): string | undefined {
  const digest = Object.hasOwn(HASHES, algorithm) ? HASHES[algorithm] : undefined;
  if (digest === undefined) {
    throw failure(
      `The hash algorithm '${algorithm}' is not supported by $hash; use one of ${Object.keys(HASHES).join(", ")}.`,
    );
  }
  if (value === undefined) return undefined;
  return digest(new TextEncoder().encode(value));
}

/** $random([seed]): a number in [0, 1); with a seed, always the same number for that seed. */
function random(this: JsonataFocus, seed?: number): number {
  if (seed === undefined) return scopeOf(this).random.next();
  return seededRandom(`$random:${roundDown(seed)}`).next();
}

function uuid(this: JsonataFocus): string {
  return scopeOf(this).random.uuid();
}

/** $parse(text): the JSON value `text` serializes (AWS's replacement for $eval). */
function parse(this: JsonataFocus, text: string): unknown {
  if (text === undefined) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    const shown = text.length > 100 ? `${text.slice(0, 100)}…` : text;
    throw failure(`The argument of $parse is not valid JSON: ${shown}`);
  }
}

/**
 * jsonata's own $fromMillis, $join and $string, which ours wrap: looked up when the
 * first expression is compiled (registerStepwiseFunctions), not when the module loads,
 * which every process that loads the engine paid for, JSONPath-only ones too.
 */
let own: Record<"fromMillis" | "join" | "string", JsonataBuiltin> | undefined;
function ownBuiltins(): NonNullable<typeof own> {
  return (own ??= {
    fromMillis: builtin("fromMillis"),
    join: builtin("join"),
    string: builtin("string"),
  });
}

function now(this: JsonataFocus, picture?: string, timezone?: string): unknown {
  return ownBuiltins().fromMillis.implementation.call(this, scopeOf(this).now, picture, timezone);
}

function millis(this: JsonataFocus): number {
  return scopeOf(this).now;
}

/** $shuffle as jsonata's (Fisher-Yates), drawing from the execution's stream. */
function shuffle(this: JsonataFocus, array: unknown[]): unknown[] | undefined {
  if (array === undefined) return undefined;
  if (array.length <= 1) return array;
  const out = [...array];
  const random = scopeOf(this).random;
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random.next() * (i + 1));
    const t = out[i];
    out[i] = out[j];
    out[j] = t;
  }
  return out;
}

function tooLong(fn: string, length: number, limit: number): { message: string } {
  return failure(
    `The string built by ${fn} would have ${length} characters; the limit is ${limit}.`,
  );
}

/** $join and $string build flat strings at once: refuse oversized ones before building them. */
function guardedJoin(this: JsonataFocus, strings: string[], separator?: string): unknown {
  const limit = jsonataLimits().maxStringLength;
  if (Array.isArray(strings)) {
    let length = (separator ?? "").length * Math.max(0, strings.length - 1);
    for (const s of strings) length += typeof s === "string" ? s.length : 0;
    if (length > limit) throw tooLong("$join", length, limit);
  }
  return ownBuiltins().join.implementation.call(this, strings, separator);
}

function guardedString(this: JsonataFocus, value: unknown, prettify?: boolean): unknown {
  const limit = jsonataLimits().maxStringLength;
  if (
    typeof value === "object" &&
    value !== null &&
    !jsonFitsWithin(value, limit / (prettify ? 4 : 1))
  ) {
    throw failure(`The string built by $string would exceed the limit of ${limit} characters.`);
  }
  return ownBuiltins().string.implementation.call(this, value, prettify);
}

/**
 * $distinct as jsonata's (first occurrences, in order; deep equality; a sequence
 * stays a sequence), but by hashing instead of comparing every pair: jsonata's
 * own is quadratic, so `$distinct([1..100000])` ran for minutes.
 */
function distinct(this: JsonataFocus, values: unknown): unknown {
  if (!Array.isArray(values) || values.length <= 1) return values;
  const isSequence = (values as { sequence?: boolean }).sequence === true;
  const out: unknown[] = isSequence ? asSequence([]) : [];
  const seen = new Set<string>();
  const identities = new Map<unknown, number>();
  for (const value of values) {
    const key = canonicalKey(value, identities);
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(value);
  }
  return out;
}

/** Equal keys exactly for deeply equal values (objects compare without regard to key order). */
function canonicalKey(value: unknown, identities: Map<unknown, number>): string {
  if (value === null) return "null";
  switch (typeof value) {
    case "string":
      return JSON.stringify(value);
    case "number":
    case "boolean":
      return String(value);
    case "object": {
      const o = value as Record<string, unknown> & {
        _jsonata_lambda?: boolean;
        _jsonata_function?: boolean;
      };
      if (Array.isArray(o)) return `[${o.map((item) => canonicalKey(item, identities)).join(",")}]`;
      if (!o._jsonata_lambda && !o._jsonata_function) {
        const keys = Object.keys(o).sort();
        return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalKey(o[k], identities)}`).join(",")}}`;
      }
      break;
    }
  }
  // functions and the like are equal only to themselves
  let id = identities.get(value);
  if (id === undefined) {
    id = identities.size;
    identities.set(value, id);
  }
  return `#${id}`;
}

type Registered = [
  name: string,
  fn: (this: JsonataFocus, ...args: never[]) => unknown,
  signature: string,
];

const FUNCTIONS: readonly Registered[] = [
  ["partition", partition, "<an:a>"],
  ["range", range, "<nnn?:a<n>>"],
  ["hash", hash, "<s-s?:s>"],
  ["random", random, "<n?:n>"],
  ["uuid", uuid, "<:s>"],
  ["parse", parse, "<s-:j>"],
  ["now", now, "<s?s?:s>"],
  ["millis", millis, "<:n>"],
  ["shuffle", shuffle, "<a:a>"],
  ["join", guardedJoin, "<a<s>s?:s>"],
  ["string", guardedString, "<x-b?:s>"],
  ["distinct", distinct, "<x:x>"],
];

/**
 * Binds Stepwise's functions for one compiled expression (they shadow jsonata's
 * own). Only those the text names: a function is always referred to as `$name`
 * (there is no $eval to build a name), and registering costs a signature parse.
 */
export function registerStepwiseFunctions(compiled: CompiledJsonata, expression: string): void {
  ownBuiltins();
  for (const [name, fn, signature] of FUNCTIONS) {
    if (expression.includes(`$${name}`)) compiled.registerFunction(name, fn, signature);
  }
}
