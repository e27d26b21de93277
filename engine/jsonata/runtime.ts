import type { RegexMatcher } from "./regex.js";
import vendored from "./vendor/jsonata-sync.js";

/**
 * The typed face of the vendored, synchronous jsonata 2.2.2 (see vendor/README.md
 * for why it is vendored and what was changed). Nothing else imports the vendor
 * module.
 */

/** An error as jsonata throws it: a plain object with a code such as "T1006". */
export interface JsonataError {
  code?: string;
  message?: string;
  position?: number;
  token?: string;
  value?: unknown;
}

export interface JsonataOptions {
  /** Evaluation steps per meter (the patched D1012 budget). */
  steps: number;
  /** Evaluation depth (D1011). */
  stack: number;
  /** Longest sequence (D2015). */
  sequence: number;
  /** Called with every evaluated value, and the meter of the evaluation. */
  checkResult(value: unknown, meter: Meter): void;
  /** Called on every call of a built-in function. */
  chargeCall(args: unknown[], result: unknown, meter: Meter): void;
  /** Builds each regex literal's matcher (`new RegexEngine(literal)`), searched with lastIndex/exec. */
  RegexEngine: new (pattern: string | RegExp, flags?: string) => RegexMatcher;
}

/** `this` of a function registered with `registerFunction`. */
export interface JsonataFocus {
  environment: { lookup(name: string): unknown };
  input: unknown;
}

export type NativeFunction = (this: JsonataFocus, ...args: never[]) => unknown;

/** A built-in as `$name` evaluates to it. */
export interface JsonataBuiltin {
  _jsonata_function: true;
  implementation: (this: JsonataFocus, ...args: unknown[]) => unknown;
}

export interface CompiledJsonata {
  /** Synchronous in the vendored build; throws a JsonataError. */
  evaluate(input: unknown, bindings: Record<string, unknown>): unknown;
  /** Binds `$name` for this expression; `signature` is jsonata's, e.g. `<an:a>`. */
  registerFunction(name: string, implementation: NativeFunction, signature?: string): void;
}

type Jsonata = (expression: string, options?: Partial<JsonataOptions>) => CompiledJsonata;

/** Parses `expression` (throws a JsonataError on a syntax error). */
export const jsonata: Jsonata = vendored as Jsonata;

/** The binding that carries the step budget shared by a state's expressions. */
export const METER_BINDING = "stepwise meter";

export interface Meter {
  steps: number;
}

/** jsonata's own implementation of the built-in `$name` (to wrap it). */
export function builtin(name: string): JsonataBuiltin {
  const value = jsonata(`$${name}`).evaluate(undefined, {});
  const fn = value as Partial<JsonataBuiltin> | undefined;
  if (!fn || fn._jsonata_function !== true || typeof fn.implementation !== "function") {
    throw new Error(`jsonata has no built-in $${name}`);
  }
  return fn as JsonataBuiltin;
}

/** jsonata marks its own arrays (sequences) with `sequence: true`. */
export function asSequence<T>(items: T[]): T[] {
  return Object.assign(items, { sequence: true });
}
