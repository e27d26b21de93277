import { StatesError } from "../core/errors.js";
import type { Json, JsonObject } from "../core/json.js";
import {
  invalidPathCause,
  PathLimitExceeded,
  readPath,
  writeReferencePath,
  type PathResult,
  type PathScope,
} from "../jsonpath/index.js";
import { evaluatePayloadTemplate } from "./payload-template.js";
import type { StepContext } from "../step-context.js";

/**
 * The JSONPath input/output pipeline of the ASL spec ("Input and Output Processing"):
 * InputPath → Parameters → (state work) → ResultSelector → ResultPath → OutputPath.
 * `Assign` is evaluated on the result after ResultSelector, against the variables as
 * they were before the state, and assigned after OutputPath (which still reads the
 * old values).
 */

/**
 * `readPath` for a state: a path that passes the evaluation bounds
 * (jsonpath/budget.ts) fails the state with States.Runtime, its cause prefixed with
 * the state as AWS words runtime errors.
 */
export function readStatePath(ctx: StepContext, path: string, scope: PathScope): PathResult {
  try {
    return readPath(path, scope);
  } catch (e) {
    if (e instanceof PathLimitExceeded)
      throw new StatesError(e.error, `${ctx.causePrefix()} ${e.cause}`);
    throw e;
  }
}

function select(ctx: StepContext, path: string, scope: PathScope): Json {
  const found = readStatePath(ctx, path, scope);
  if (!found.found) {
    throw new StatesError(
      "States.Runtime",
      `${ctx.causePrefix()} ${invalidPathCause(path, scope)}`,
    );
  }
  return found.value;
}

/** InputPath: absent or `$` keeps the input; `null` gives `{}`. */
export function applyInputPath(
  ctx: StepContext,
  path: string | null | undefined,
  input: Json,
): Json {
  if (path === undefined || path === "$") return input;
  if (path === null) return {};
  return select(ctx, path, ctx.pathScope(input));
}

/** Parameters / ItemSelector / ResultSelector: a payload template over `input`. */
export function applyTemplate(
  ctx: StepContext,
  template: Json | undefined,
  input: Json,
  field: string,
  extra?: { taskToken?: string },
): Json {
  if (template === undefined) return input;
  return evaluatePayloadTemplate(template, ctx.pathScope(input, extra), ctx.random, field);
}

/** ResultPath: absent or `$` keeps the result; `null` keeps the input; else merge into the input. */
export function applyResultPath(path: string | null | undefined, input: Json, result: Json): Json {
  if (path === undefined || path === "$") return result;
  if (path === null) return input;
  return writeReferencePath(input, path, result);
}

/** OutputPath: absent or `$` keeps the output; `null` gives `{}`. */
export function applyOutputPath(
  ctx: StepContext,
  path: string | null | undefined,
  output: Json,
): Json {
  if (path === undefined || path === "$") return output;
  if (path === null) return {};
  return select(ctx, path, ctx.pathScope(output));
}

/**
 * Assign (JSONPath): a payload template over `value`, computed against the
 * pre-state variables and not yet assigned (AWS "Passing data between states with
 * variables": new values take effect once the state is done, so the state's own
 * OutputPath still reads the old ones). Hand the values to `assignValues` last.
 */
export function computeAssign(
  ctx: StepContext,
  assign: JsonObject | undefined,
  value: Json,
): Record<string, Json> | undefined {
  if (!assign) return undefined;
  return evaluatePayloadTemplate(assign, ctx.pathScope(value), ctx.random, "Assign") as Record<
    string,
    Json
  >;
}

/** Assigns what `computeAssign` computed, once everything else of the state is. */
export function assignValues(ctx: StepContext, values: Record<string, Json> | undefined): void {
  if (values !== undefined) ctx.assign(values);
}

/** Assign (JSONPath) computed and assigned at once: for a state whose output reads no path after it. */
export function evaluateAssign(
  ctx: StepContext,
  assign: JsonObject | undefined,
  value: Json,
): void {
  assignValues(ctx, computeAssign(ctx, assign, value));
}

/**
 * The tail of the pipeline shared by Task, Parallel and Map: ResultSelector, Assign,
 * ResultPath, OutputPath.
 */
export function finishResult(
  ctx: StepContext,
  state: {
    ResultSelector?: JsonObject;
    ResultPath?: string | null;
    OutputPath?: string | null;
    Assign?: JsonObject;
  },
  rawInput: Json,
  result: Json,
): Json {
  const selected = applyTemplate(ctx, state.ResultSelector, result, "ResultSelector");
  const values = computeAssign(ctx, state.Assign, selected);
  const merged = applyResultPath(state.ResultPath, rawInput, selected);
  const output = applyOutputPath(ctx, state.OutputPath, merged);
  assignValues(ctx, values);
  return output;
}
