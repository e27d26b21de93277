import type { ChoiceRule } from "../core/definition.js";
import { StatesError } from "../core/errors.js";
import { isJsonObject, type Json, type JsonObject } from "../core/json.js";
import { parseOffsetDateTime } from "../core/timestamp.js";
import { queryEvaluationError, unexpectedType } from "../jsonata/errors.js";
import { JsonataScope, type Evaluated, type StatesBinding } from "../jsonata/evaluate.js";
import { assignVariables, evaluateAssign } from "../jsonata/variables.js";
import type { StepContext } from "../step-context.js";
import type { LanguageIO, NumericField } from "./language.js";

/**
 * The JSONata query language (AWS "Transforming data with JSONata"). A state has
 * two data fields: `Arguments` (what a Task or Parallel sends) and `Output` (the
 * state output; by default the state input for Pass, Choice, Wait and Succeed, the
 * result for Task, Parallel and Map, the error output in a Catch). Both, `Assign`
 * and the other fields that take expressions see `$states.input` (the raw state
 * input), `$states.context`, `$states.result` once there is one, and
 * `$states.errorOutput` in a Catch. Assign and Output are evaluated against the
 * variables before the state; the new values are assigned only when both succeed.
 */

function scopeOf(
  ctx: StepContext,
  states: Omit<StatesBinding, "context">,
  taskToken?: string,
): JsonataScope {
  const context = ctx.contextObject(taskToken === undefined ? undefined : { taskToken });
  return new JsonataScope(ctx, { ...states, context });
}

/** Assign, then Output (or `fallback`); the variables change only once both are computed. */
function finish(
  ctx: StepContext,
  scope: JsonataScope,
  fields: { Output?: Json | undefined; Assign?: JsonObject | undefined },
  fallback: Json,
): Json {
  const values = evaluateAssign(scope, fields.Assign);
  const output = fields.Output === undefined ? fallback : scope.json(fields.Output, "Output");
  assignVariables(ctx, values);
  return output;
}

function wrongType(
  ctx: StepContext,
  field: string,
  expected: string,
  evaluated: Evaluated,
): StatesError {
  if (evaluated.expression !== undefined) {
    return unexpectedType(ctx, evaluated.expression, field, expected, evaluated.value);
  }
  return queryEvaluationError(
    ctx,
    `The field '${field}' must be of type '${expected}' but was: ${JSON.stringify(evaluated.value)}`,
    field,
  );
}

function stringField(ctx: StepContext, scope: JsonataScope, template: Json, field: string): string {
  const evaluated = scope.field(template, field);
  if (typeof evaluated.value !== "string") throw wrongType(ctx, field, "string", evaluated);
  return evaluated.value;
}

/** The smallest value each numeric field accepts (AWS: timeouts are positive, counts not negative). */
const MINIMUM: Readonly<Record<NumericField | "Seconds", number>> = {
  TimeoutSeconds: 1,
  HeartbeatSeconds: 1,
  MaxConcurrency: 0,
  ToleratedFailureCount: 0,
  ToleratedFailurePercentage: 0,
  Seconds: 0,
};

/** AWS's largest wait and timeout (99999999 seconds). */
const MAX_SECONDS = 99_999_999;

function numberField(
  ctx: StepContext,
  scope: JsonataScope,
  template: Json,
  field: NumericField | "Seconds",
): number {
  const evaluated = scope.field(template, field);
  const value = evaluated.value;
  const integer = field !== "ToleratedFailurePercentage";
  if (typeof value !== "number" || (integer && !Number.isInteger(value))) {
    throw wrongType(ctx, field, integer ? "integer" : "number", evaluated);
  }
  const max = field.endsWith("Seconds") ? MAX_SECONDS : Number.MAX_SAFE_INTEGER;
  if (value < MINIMUM[field] || value > max) {
    const source =
      evaluated.expression === undefined
        ? ""
        : ` (from the JSONata expression '${evaluated.expression}')`;
    throw queryEvaluationError(
      ctx,
      `The value ${value} of the field '${field}'${source} is out of range: it must be between ${MINIMUM[field]} and ${max}.`,
      field,
    );
  }
  return value;
}

function condition(ctx: StepContext, scope: JsonataScope, rule: ChoiceRule): boolean {
  const evaluated = scope.field(rule.Condition ?? null, "Condition");
  if (typeof evaluated.value !== "boolean") throw wrongType(ctx, "Condition", "boolean", evaluated);
  return evaluated.value;
}

function objectOrUndefined(value: Json | undefined): JsonObject | undefined {
  return isJsonObject(value) ? value : undefined;
}

export const jsonataLanguage: LanguageIO = {
  pass(ctx, state, raw) {
    return finish(ctx, scopeOf(ctx, { input: raw }), state, raw);
  },

  arguments(ctx, state, raw, taskToken) {
    if (state.Arguments === undefined) return raw;
    return scopeOf(ctx, { input: raw }, taskToken).json(state.Arguments, "Arguments");
  },

  result(ctx, state, raw, result) {
    return finish(ctx, scopeOf(ctx, { input: raw, result }), state, result);
  },

  choose(ctx, state, raw) {
    const scope = scopeOf(ctx, { input: raw });
    for (const rule of state.Choices) {
      if (!condition(ctx, scope, rule)) continue;
      const fields = { Output: rule.Output, Assign: objectOrUndefined(rule.Assign) };
      return { next: rule.Next, output: finish(ctx, scope, fields, raw) };
    }
    // The state's own Output and Assign apply when the Default is taken.
    if (state.Default === undefined) return { next: undefined, output: raw };
    return { next: state.Default, output: finish(ctx, scope, state, raw) };
  },

  wait(ctx, state, raw) {
    const scope = scopeOf(ctx, { input: raw });
    let until = Date.parse(ctx.frame.enteredTime);
    if (state.Seconds !== undefined) {
      until += numberField(ctx, scope, state.Seconds, "Seconds") * 1000;
    } else if (state.Timestamp !== undefined) {
      const timestamp = stringField(ctx, scope, state.Timestamp, "Timestamp");
      const at = parseOffsetDateTime(timestamp);
      if (at === undefined) {
        throw queryEvaluationError(
          ctx,
          `The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: ${timestamp}`,
          "Timestamp",
        );
      }
      until = at;
    }
    return { until, output: finish(ctx, scope, state, raw) };
  },

  succeed(ctx, state, raw) {
    if (state.Output === undefined) return raw;
    return scopeOf(ctx, { input: raw }).json(state.Output, "Output");
  },

  fail(ctx, state, raw) {
    const out: { error?: string; cause?: string } = {};
    if (state.Error === undefined && state.Cause === undefined) return out;
    const scope = scopeOf(ctx, { input: raw });
    if (state.Error !== undefined) out.error = stringField(ctx, scope, state.Error, "Error");
    if (state.Cause !== undefined) out.cause = stringField(ctx, scope, state.Cause, "Cause");
    return out;
  },

  catchOutput(ctx, _state, catcher, raw, errorOutput) {
    // A budget of its own: the error being caught may be the state's exhausted budget.
    const scope = new JsonataScope(
      ctx,
      { input: raw, errorOutput, context: ctx.contextObject() },
      { freshMeter: true },
    );
    return finish(ctx, scope, catcher, errorOutput);
  },

  mapItems(ctx, state, raw) {
    if (state.ItemReader) {
      throw new StatesError(
        "States.ItemReaderFailed",
        `${ctx.causePrefix()} ItemReader is not supported by Stepwise: items must come from the state input.`,
      );
    }
    if (state.Items === undefined) {
      if (!Array.isArray(raw)) {
        throw queryEvaluationError(
          ctx,
          `Map state input must be an array but was: ${JSON.stringify(raw)}`,
        );
      }
      return { items: raw, effective: raw };
    }
    const evaluated = scopeOf(ctx, { input: raw }).field(state.Items, "Items");
    if (!Array.isArray(evaluated.value)) throw wrongType(ctx, "Items", "array", evaluated);
    return { items: evaluated.value, effective: raw };
  },

  mapItemInput(ctx, state, effective, item, index) {
    if (state.ItemSelector === undefined) return item;
    // $states.context.Map.Item holds the item, its index and its source: STATE_DATA for items
    // taken from the state input (AWS "Context object data for Map states").
    const context = {
      ...ctx.contextObject(),
      Map: { Item: { Index: index, Value: item, Source: "STATE_DATA" } },
    };
    return new JsonataScope(ctx, { input: effective, context }).json(
      state.ItemSelector,
      "ItemSelector",
    );
  },

  number(ctx, state, field, raw) {
    const template = (state as unknown as Partial<Record<NumericField, Json>>)[field];
    if (template === undefined) return undefined;
    if (typeof template === "number") return template;
    return numberField(ctx, scopeOf(ctx, { input: raw }), template, field);
  },
};
