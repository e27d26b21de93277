import type { Json } from "../../core/json.js";
import { isJsonObject } from "../../core/json.js";
import { StatesError } from "../../core/errors.js";
import type { RandomSource } from "../../core/random.js";
import type { IntrinsicArg } from "../parse.js";

/** What a function sees besides its evaluated arguments. */
export interface IntrinsicContext {
  /** `States.Format`, for messages. */
  readonly name: string;
  /** The argument nodes as written (States.Format reads its literal template's escapes). */
  readonly nodes: readonly IntrinsicArg[];
  readonly random: RandomSource;
}

export interface IntrinsicFunction {
  readonly minArgs: number;
  /** `Infinity` for variadic functions. */
  readonly maxArgs: number;
  evaluate(args: readonly Json[], context: IntrinsicContext): Json;
}

export type IntrinsicTable = Readonly<Record<string, IntrinsicFunction>>;

/** ASL: a function given bad arguments fails with States.IntrinsicFailure. */
export function intrinsicFailure(cause: string): never {
  throw new StatesError("States.IntrinsicFailure", cause);
}

/** JSON type names as AWS prints them in causes ("Expected 'array', but was 'number'"). */
export function jsonTypeName(value: Json): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (isJsonObject(value)) return "object";
  return typeof value;
}

function describe(value: Json): string {
  return `${jsonTypeName(value)} ${JSON.stringify(value)}`;
}

const ORDINALS = ["first", "second", "third", "fourth", "fifth"];

function ordinal(index: number): string {
  return ORDINALS[index] ?? `#${index + 1}`;
}

function wrongType(context: IntrinsicContext, index: number, expected: string, value: Json): never {
  intrinsicFailure(
    `Invalid arguments in ${context.name}: the ${ordinal(index)} argument must be ${expected}, but was ${describe(value)}.`,
  );
}

export function stringArg(args: readonly Json[], index: number, context: IntrinsicContext): string {
  const value = args[index] ?? null;
  if (typeof value !== "string") wrongType(context, index, "a string", value);
  return value;
}

export function arrayArg(args: readonly Json[], index: number, context: IntrinsicContext): Json[] {
  const value = args[index] ?? null;
  if (!Array.isArray(value)) wrongType(context, index, "an array", value);
  return value;
}

export function objectArg(
  args: readonly Json[],
  index: number,
  context: IntrinsicContext,
): { [key: string]: Json } {
  const value = args[index] ?? null;
  if (!isJsonObject(value)) wrongType(context, index, "a JSON object", value);
  return value;
}

export function booleanArg(
  args: readonly Json[],
  index: number,
  context: IntrinsicContext,
): boolean {
  const value = args[index] ?? null;
  if (typeof value !== "boolean") wrongType(context, index, "a boolean", value);
  return value;
}

export function numberArg(args: readonly Json[], index: number, context: IntrinsicContext): number {
  const value = args[index] ?? null;
  if (typeof value !== "number") wrongType(context, index, "a number", value);
  return value;
}

/**
 * An integer argument. AWS rounds fractional numbers to the nearest integer,
 * halves towards positive infinity as Java's Math.round does (recorded:
 * MathAdd(1.49, 1.5) = 3, MathAdd(-2.5, 0) = -2); JavaScript's Math.round agrees.
 */
export function integerArg(
  args: readonly Json[],
  index: number,
  context: IntrinsicContext,
): number {
  const value = numberArg(args, index, context);
  const rounded = Math.round(value);
  if (rounded < JAVA_INT_MIN || rounded > JAVA_INT_MAX) {
    intrinsicFailure(
      `Invalid arguments in ${context.name}: the ${ordinal(index)} argument must be an integer between ${JAVA_INT_MIN} and ${JAVA_INT_MAX}, but was ${value}.`,
    );
  }
  return rounded;
}

/** AWS's intrinsics take Java `int`s. */
export const JAVA_INT_MIN = -2147483648;
export const JAVA_INT_MAX = 2147483647;
