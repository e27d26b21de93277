import { selectChoice } from "../choice/evaluate.js";
import { StatesError } from "../core/errors.js";
import { isJsonObject, type Json } from "../core/json.js";
import { parseOffsetDateTime } from "../core/timestamp.js";
import { invalidPathCause, readPath } from "../jsonpath/index.js";
import type { StepContext } from "../step-context.js";
import type { WaitState } from "../core/definition.js";
import {
  applyInputPath,
  applyOutputPath,
  applyResultPath,
  applyTemplate,
  assignValues,
  computeAssign,
  evaluateAssign,
  finishResult,
  readStatePath,
} from "./jsonpath-io.js";
import type { LanguageIO, NumericField } from "./language.js";
import { evaluatePayloadTemplate } from "./payload-template.js";

function runtime(ctx: StepContext, message: string): StatesError {
  return new StatesError("States.Runtime", `${ctx.causePrefix()} ${message}`);
}

/** `MaxConcurrencyPath` and friends read integers (`Count`, `MaxConcurrency`) or floats. */
const FLOAT_FIELDS: ReadonlySet<NumericField> = new Set(["ToleratedFailurePercentage"]);

export const jsonPathLanguage: LanguageIO = {
  pass(ctx, state, raw) {
    const input = applyInputPath(ctx, state.InputPath, raw);
    const effective = applyTemplate(ctx, state.Parameters, input, "Parameters");
    const result = state.Result !== undefined ? state.Result : effective;
    // Assign reads the result (Result, else the effective input after Parameters) and
    // the variables before the state; OutputPath reads them too: assigned last.
    const values = computeAssign(ctx, state.Assign, result);
    const output = applyOutputPath(
      ctx,
      state.OutputPath,
      applyResultPath(state.ResultPath, raw, result),
    );
    assignValues(ctx, values);
    return output;
  },

  arguments(ctx, state, raw, taskToken) {
    const input = applyInputPath(ctx, state.InputPath, raw);
    const extra = taskToken === undefined ? undefined : { taskToken };
    return applyTemplate(ctx, state.Parameters, input, "Parameters", extra);
  },

  result(ctx, state, raw, result) {
    return finishResult(ctx, state, raw, result);
  },

  choose(ctx, state, raw) {
    const input = applyInputPath(ctx, state.InputPath, raw);
    const scope = ctx.pathScope(input);
    let rule;
    try {
      rule = selectChoice(state.Choices, (path) => readPath(path, scope));
    } catch (e) {
      // The choice module words the problem; AWS prefixes it with the state and event.
      if (e instanceof StatesError)
        throw new StatesError(e.error, `${ctx.causePrefix()} ${e.cause}`);
      throw e;
    }
    const next = rule ? rule.Next : state.Default;
    const assign = rule ? rule.Assign : state.Assign;
    const values =
      next !== undefined
        ? computeAssign(ctx, isJsonObject(assign) ? assign : undefined, input)
        : undefined;
    const output = applyOutputPath(ctx, state.OutputPath, input);
    assignValues(ctx, values);
    return { next, output };
  },

  wait(ctx, state, raw) {
    const input = applyInputPath(ctx, state.InputPath, raw);
    const values = computeAssign(ctx, state.Assign, input);
    const output = applyOutputPath(ctx, state.OutputPath, input);
    // SecondsPath and TimestampPath read the variables before the state too.
    const until = waitUntil(ctx, state, input);
    assignValues(ctx, values);
    return { until, output };
  },

  succeed(ctx, state, raw) {
    return applyOutputPath(ctx, state.OutputPath, applyInputPath(ctx, state.InputPath, raw));
  },

  fail(ctx, state, raw) {
    const out: { error?: string; cause?: string } = {};
    const read = (path: string, field: string): string => {
      const found = readStatePath(ctx, path, ctx.pathScope(raw));
      if (!found.found || typeof found.value !== "string") {
        throw runtime(ctx, `The ${field} field refers to an invalid value: ${path}`);
      }
      return found.value;
    };
    if (state.Error !== undefined) out.error = state.Error;
    else if (state.ErrorPath !== undefined)
      out.error = evaluateStringPath(ctx, state.ErrorPath, raw, "ErrorPath", read);
    if (state.Cause !== undefined) out.cause = state.Cause;
    else if (state.CausePath !== undefined)
      out.cause = evaluateStringPath(ctx, state.CausePath, raw, "CausePath", read);
    return out;
  },

  catchOutput(ctx, _state, catcher, raw, errorOutput) {
    evaluateAssign(ctx, catcher.Assign, errorOutput);
    return applyResultPath(catcher.ResultPath, raw, errorOutput);
  },

  mapItems(ctx, state, raw) {
    const effective = applyInputPath(ctx, state.InputPath, raw);
    if (state.ItemReader) {
      throw new StatesError(
        "States.ItemReaderFailed",
        `${ctx.causePrefix()} ItemReader is not supported by Stepwise: items must come from the state input.`,
      );
    }
    let items: Json = effective;
    if (state.ItemsPath !== undefined && state.ItemsPath !== "$") {
      const found = readStatePath(ctx, state.ItemsPath, ctx.pathScope(effective));
      if (!found.found) {
        throw runtime(ctx, invalidPathCause(state.ItemsPath, ctx.pathScope(effective)));
      }
      items = found.value;
    }
    if (!Array.isArray(items)) {
      throw runtime(ctx, `Map state input must be an array but was: ${JSON.stringify(items)}`);
    }
    return { items, effective };
  },

  mapItemInput(ctx, state, effective, item, index) {
    const template = state.ItemSelector ?? state.Parameters;
    if (template === undefined) return item;
    // $$.Map.Item holds the item, its index and its source: STATE_DATA for items taken from
    // the state input (AWS "Context object data for Map states").
    const context = {
      ...ctx.contextObject(),
      Map: { Item: { Index: index, Value: item, Source: "STATE_DATA" } },
    };
    const scope = { input: effective, context, variables: ctx.variables() };
    return evaluatePayloadTemplate(template, scope, ctx.random, "ItemSelector");
  },

  number(ctx, state, field, raw) {
    const s = state as unknown as Record<string, Json | undefined>;
    const literal = s[field];
    if (typeof literal === "number") return literal;
    const path = s[`${field}Path`];
    if (typeof path !== "string") return undefined;
    const found = readStatePath(ctx, path, ctx.pathScope(raw));
    const value = found.found ? found.value : undefined;
    const float = FLOAT_FIELDS.has(field);
    if (typeof value !== "number" || (!float && !Number.isInteger(value))) {
      const shown =
        value === undefined ? "null" : typeof value === "string" ? value : JSON.stringify(value);
      throw runtime(
        ctx,
        `The ${field}Path field refers to value "${shown}" which is not a valid ${float ? "float" : "integer"}: ${path}`,
      );
    }
    return value;
  },
};

/** The instant (epoch ms) a JSONPath Wait wakes at: Seconds, Timestamp, or their paths. */
function waitUntil(ctx: StepContext, state: WaitState, input: Json): number {
  const base = Date.parse(ctx.frame.enteredTime);
  if (typeof state.Seconds === "number") return base + state.Seconds * 1000;
  if (state.Timestamp !== undefined) {
    const at = parseOffsetDateTime(state.Timestamp);
    if (at === undefined) {
      throw runtime(
        ctx,
        `The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: ${state.Timestamp}`,
      );
    }
    return at;
  }
  if (state.SecondsPath !== undefined) {
    return base + secondsAt(ctx, state.SecondsPath, input) * 1000;
  }
  if (state.TimestampPath !== undefined) {
    return timestampAt(ctx, state.TimestampPath, input);
  }
  return base;
}

/**
 * The seconds a Wait's SecondsPath names. AWS fails the execution with States.Runtime
 * for a missing or negative value, in the words kept here (recorded in the
 * conformance data); for any other value that is not a whole number it is the same
 * error, with a cause that says what the path found.
 */
function secondsAt(ctx: StepContext, path: string, input: Json): number {
  const found = readStatePath(ctx, path, ctx.pathScope(input));
  if (!found.found) {
    throw runtime(ctx, `The SecondsPath parameter does not reference an input value: ${path}`);
  }
  const value = found.value;
  if (typeof value !== "number" || !Number.isInteger(value)) {
    throw runtime(
      ctx,
      `SecondsPath '${path}' must resolve to a non-negative integer number of seconds, got ${describeValue(value)}`,
    );
  }
  if (value < 0) {
    throw runtime(
      ctx,
      `The SecondsPath parameter references a negative value: ${path} == ${value}`,
    );
  }
  return value;
}

/**
 * The instant (epoch milliseconds) a Wait's TimestampPath names. A string that is no
 * timestamp gets AWS's recorded cause; a missing value or one that is not a string
 * gets the same error, States.Runtime, with a cause that says what the path found.
 */
function timestampAt(ctx: StepContext, path: string, input: Json): number {
  const found = readStatePath(ctx, path, ctx.pathScope(input));
  if (!found.found) {
    throw runtime(ctx, `The TimestampPath parameter does not reference an input value: ${path}`);
  }
  const value = found.value;
  if (typeof value !== "string") {
    throw runtime(
      ctx,
      `TimestampPath '${path}' must resolve to an ISO-8601 timestamp string such as "2024-01-01T00:00:00Z", got ${describeValue(value)}`,
    );
  }
  const at = parseOffsetDateTime(value);
  if (at === undefined) {
    throw runtime(
      ctx,
      `The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: ${path} == ${value}`,
    );
  }
  return at;
}

/** A value and its kind for a cause: 'the string "10"', 'an object {"a":1}', 'null'. */
function describeValue(value: Json): string {
  if (value === null) return "null";
  const text = JSON.stringify(value);
  const short = text.length > 100 ? `${text.slice(0, 97)}...` : text;
  if (Array.isArray(value)) return `an array ${short}`;
  if (typeof value === "object") return `an object ${short}`;
  return `the ${typeof value} ${short}`;
}

function evaluateStringPath(
  ctx: StepContext,
  path: string,
  raw: Json,
  field: string,
  read: (path: string, field: string) => string,
): string {
  if (path.startsWith("States.")) {
    const value = evaluatePayloadTemplate({ "v.$": path }, ctx.pathScope(raw), ctx.random, field);
    const v = isJsonObject(value) ? value.v : undefined;
    return typeof v === "string" ? v : JSON.stringify(v ?? null);
  }
  return read(path, field);
}
