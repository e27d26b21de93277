import { StatesError } from "../core/errors.js";
import type { StepContext } from "../step-context.js";
import type { JsonataError } from "./runtime.js";

/**
 * The causes AWS Step Functions gives for JSONata failures (recorded in the
 * conformance cases), all under States.QueryEvaluationError:
 *
 *   An error occurred while executing the state 'S' (entered at the event id #2).
 *   The JSONata expression '$x' specified for the field 'Output/result' returned nothing (undefined).
 *   … threw an error during evaluation. T1006: Attempted to invoke a non-function
 *   … returned an unexpected result type. Expected 'array', but was 'string' for value: "s"
 */
export function queryEvaluationError(
  ctx: StepContext,
  message: string,
  /** The field that failed (`Output/result`), for the EvaluationFailed event's `location`. */
  location?: string,
): StatesError {
  const error = new StatesError("States.QueryEvaluationError", `${ctx.causePrefix()} ${message}`);
  if (location !== undefined) error.location = location;
  return error;
}

function subject(expression: string, field: string): string {
  return `The JSONata expression '${expression}' specified for the field '${field}'`;
}

export function returnedNothing(ctx: StepContext, expression: string, field: string): StatesError {
  return queryEvaluationError(
    ctx,
    `${subject(expression, field)} returned nothing (undefined).`,
    field,
  );
}

export function threwError(
  ctx: StepContext,
  expression: string,
  field: string,
  error: unknown,
): StatesError {
  return queryEvaluationError(
    ctx,
    `${subject(expression, field)} threw an error during evaluation. ${describeError(error)}`,
    field,
  );
}

export function unexpectedType(
  ctx: StepContext,
  expression: string,
  field: string,
  expected: string,
  value: unknown,
): StatesError {
  return queryEvaluationError(
    ctx,
    `${subject(expression, field)} returned an unexpected result type. Expected '${expected}', but was '${typeName(value)}' for value: ${shown(value)}`,
    field,
  );
}

export function unsupportedResult(
  ctx: StepContext,
  expression: string,
  field: string,
): StatesError {
  return queryEvaluationError(
    ctx,
    `${subject(expression, field)} returned an unsupported result type.`,
    field,
  );
}

/** `T1006: Attempted to invoke a non-function`, as jsonata words its errors. */
export function describeError(error: unknown): string {
  if (error instanceof Error) return error.message;
  if (typeof error === "object" && error !== null) {
    const e = error as JsonataError;
    const message = e.message ?? "";
    return e.code ? `${e.code}: ${message}` : message;
  }
  return String(error);
}

/** The type names of JSONata's `$type`, which AWS's causes use. */
export function typeName(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "function") return "function";
  if (typeof value === "object") {
    const o = value as { _jsonata_lambda?: boolean; _jsonata_function?: boolean };
    return o._jsonata_lambda || o._jsonata_function ? "function" : "object";
  }
  return typeof value;
}

function shown(value: unknown): string {
  const text = typeName(value) === "function" ? undefined : JSON.stringify(value);
  if (text === undefined) return String(value);
  return text.length > 1_000 ? `${text.slice(0, 1_000)}…` : text;
}
