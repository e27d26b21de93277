import { StatesError } from "../core/errors.js";
import type { Json, JsonObject } from "../core/json.js";
import type { StepContext } from "../step-context.js";
import type { JsonataScope } from "./evaluate.js";

/**
 * Workflow variables (AWS "Passing data between states with variables"). All the
 * values of a state's `Assign` are computed against the variables as they were
 * before the state, then assigned together, so `{"a": "{% $b %}", "b": 1}` reads
 * the old `$b`. Assign and Output of one state both see the old values.
 *
 * AWS's size limits: a single variable at most 256 KiB, all the variables of one
 * Assign together at most 256 KiB, all stored variables of an execution at most
 * 10 MiB (here: the variables visible to the run, its own and its parents'). Sizes
 * are of the UTF-8 JSON text.
 */
export const VARIABLE_LIMITS = Object.freeze({
  maxVariableBytes: 256 * 1024,
  maxAssignBytes: 256 * 1024,
  maxTotalBytes: 10 * 1024 * 1024,
});

/** Evaluates a JSONata `Assign` object (each value a template) without assigning yet. */
export function evaluateAssign(
  scope: JsonataScope,
  assign: JsonObject | undefined,
): Record<string, Json> | undefined {
  if (assign === undefined) return undefined;
  const values: Record<string, Json> = {};
  for (const [name, template] of Object.entries(assign))
    values[name] = scope.json(template, `Assign/${name}`);
  return values;
}

/** Assigns `values` in the run's scope once they pass AWS's size limits. */
export function assignVariables(ctx: StepContext, values: Record<string, Json> | undefined): void {
  if (values === undefined || Object.keys(values).length === 0) return;
  let assigned = 0;
  for (const [name, value] of Object.entries(values)) {
    const bytes = utf8Length(JSON.stringify(value));
    if (bytes > VARIABLE_LIMITS.maxVariableBytes) throw variableTooLarge(ctx, name);
    assigned += bytes;
  }
  if (assigned > VARIABLE_LIMITS.maxAssignBytes) {
    throw tooLarge(
      ctx,
      `The variables assigned by the state have ${assigned} bytes together; one Assign may have at most ${VARIABLE_LIMITS.maxAssignBytes}.`,
    );
  }
  const total = utf8Length(JSON.stringify({ ...ctx.variables(), ...values }));
  if (total > VARIABLE_LIMITS.maxTotalBytes) {
    throw tooLarge(
      ctx,
      `The variables of the execution would have ${total} bytes; at most ${VARIABLE_LIMITS.maxTotalBytes} may be stored.`,
    );
  }
  ctx.assign(values);
}

/** A value refused for variable `name` (also while it is being computed, see JsonataScope). */
export function variableTooLarge(ctx: StepContext, name: string): StatesError {
  return tooLarge(
    ctx,
    `The value assigned to the variable '${name}' exceeds the maximum size of ${VARIABLE_LIMITS.maxVariableBytes} bytes.`,
  );
}

function tooLarge(ctx: StepContext, message: string): StatesError {
  return new StatesError("States.DataLimitExceeded", `${ctx.causePrefix()} ${message}`);
}

/** Bytes of `text` in UTF-8, without encoding it. */
export function utf8Length(text: string): number {
  let bytes = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x80) bytes += 1;
    else if (c < 0x800) bytes += 2;
    else if (c >= 0xd800 && c <= 0xdbff && (text.charCodeAt(i + 1) & 0xfc00) === 0xdc00) {
      bytes += 4;
      i += 1;
    } else bytes += 3;
  }
  return bytes;
}
