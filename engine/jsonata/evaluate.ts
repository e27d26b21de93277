import { PayloadNeeded } from "../core/payload-ref.js";
import { StatesError } from "../core/errors.js";
import { SliceExceeded } from "../core/step-slice.js";
import { isJsonObject, type Json, type JsonObject } from "../core/json.js";
import { DATA_LIMIT_BYTES, type StepContext } from "../step-context.js";
import { compileExpression } from "./compile.js";
import { returnedNothing, threwError, unsupportedResult } from "./errors.js";
import { SCOPE_BINDING, type EvaluationScope } from "./functions.js";
import { newMeter } from "./meter.js";
import { METER_BINDING, type Meter } from "./runtime.js";
import { toJson } from "./values.js";
import { variableTooLarge } from "./variables.js";

/**
 * JSONata templates (AWS "Transforming data with JSONata"): in a JSONata state, a
 * string that starts with "{%" and ends with "%}" is an expression, wherever it
 * sits in a field's JSON (nested in objects and arrays too); every other value is
 * a literal. Expressions see `$states` and the workflow variables as `$name`; the
 * input `$` is not bound (AWS refuses `$` and `$$` at the top level of an
 * expression).
 */
export function isExpression(value: unknown): value is string {
  return (
    typeof value === "string" && value.length >= 4 && value.startsWith("{%") && value.endsWith("%}")
  );
}

/** The expression inside the delimiters, as AWS quotes it in causes. */
export function expressionOf(template: string): string {
  return template.slice(2, -2).trim();
}

/** `$states` (AWS "Reserved variable: $states"). */
export interface StatesBinding {
  input: Json;
  context: JsonObject;
  /** Task, Parallel and Map, once the result is known. */
  result?: Json;
  /** In a Catch. */
  errorOutput?: Json;
}

/** A field evaluated to JSON, with the expression it came from (for causes). */
export interface Evaluated {
  value: Json;
  expression?: string;
}

/**
 * One budget per step(): all the expressions of a state (and of every Map item)
 * share it. A Catch gets a budget of its own (`freshMeter`), so that the error
 * of a state that exhausted its budget can still be caught.
 */
const meters = new WeakMap<StepContext, Meter>();

function meterOf(ctx: StepContext): Meter {
  let meter = meters.get(ctx);
  if (!meter) {
    meter = newMeter();
    meters.set(ctx, meter);
  }
  return meter;
}

/** Evaluates the JSONata fields of one state against one `$states` and the variables before the state. */
export class JsonataScope {
  private readonly bindings: Record<string, unknown>;

  constructor(
    private readonly ctx: StepContext,
    states: StatesBinding,
    options: { freshMeter?: boolean } = {},
  ) {
    const scope: EvaluationScope = { random: ctx.random, now: ctx.now };
    this.bindings = {
      ...ctx.variables(),
      states,
      [SCOPE_BINDING]: scope,
      [METER_BINDING]: options.freshMeter ? newMeter() : meterOf(ctx),
    };
  }

  /** A template: literals stay, expressions are replaced by their values. `field` names it in causes. */
  json(template: Json, field: string): Json {
    if (isExpression(template)) return this.expression(template, field);
    if (Array.isArray(template)) return template.map((item, i) => this.json(item, `${field}/${i}`));
    if (isJsonObject(template)) {
      const out: JsonObject = {};
      for (const [key, value] of Object.entries(template))
        out[key] = this.json(value, `${field}/${key}`);
      return out;
    }
    return template;
  }

  /** Like `json`, remembering the expression when the whole field is one (typed fields word their causes with it). */
  field(template: Json, field: string): Evaluated {
    if (isExpression(template))
      return { value: this.expression(template, field), expression: expressionOf(template) };
    return { value: this.json(template, field) };
  }

  /** One `{% %}` string, converted to JSON; nothing (undefined) fails the state as AWS does. */
  expression(template: string, field: string): Json {
    const expression = expressionOf(template);
    const raw = this.evaluate(expression, field);
    // Past the quota only when values that large go by reference (core/payload-ref.ts).
    const limit = Math.max(DATA_LIMIT_BYTES, this.ctx.execution.payloads?.resolveMaxBytes ?? 0);
    const converted = toJson(raw, limit);
    switch (converted.kind) {
      case "json":
        return converted.value;
      case "undefined":
        throw returnedNothing(this.ctx, expression, field);
      case "unsupported":
        throw unsupportedResult(this.ctx, expression, field);
      case "tooLarge":
        // Refused while copying, before it is ever serialized: as an oversized
        // variable in Assign, else with the wording of an oversized state output.
        if (field.startsWith("Assign/")) throw variableTooLarge(this.ctx, field.split("/")[1]!);
        throw new StatesError(
          "States.DataLimitExceeded",
          `The state/task '${this.ctx.frame.name}' returned a result with a size exceeding the maximum number of bytes service limit.`,
        );
    }
  }

  private evaluate(expression: string, field: string): unknown {
    try {
      return compileExpression(expression).evaluate(undefined, this.bindings);
    } catch (e) {
      // jsonata's errors are plain objects with a code. Anything else (a RangeError
      // for a stack the depth limit did not stop, a TypeError of jsonata on odd
      // input) is still the expression's failure: it must not crash the worker.
      if (e instanceof StatesError || e instanceof PayloadNeeded || e instanceof SliceExceeded)
        throw e;
      throw threwError(this.ctx, expression, field, e);
    }
  }
}
