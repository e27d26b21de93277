import type { Json } from "../core/json.js";
import { StatesError } from "../core/errors.js";
import type { RandomSource } from "../core/random.js";
import type { PathScope } from "../jsonpath/evaluate.js";
import { readPath } from "../jsonpath/evaluate.js";
import { missingPathCause } from "../jsonpath/messages.js";
import { INTRINSIC_FUNCTIONS } from "./functions/index.js";
import type { IntrinsicArg, IntrinsicCall } from "./parse.js";
import { IntrinsicSyntaxError, parseIntrinsic } from "./parse.js";

/**
 * The message for a call whose function is unknown or has the wrong number of
 * arguments, or undefined when every call in the tree is well formed.
 */
export function checkCall(call: IntrinsicCall): string | undefined {
  const fn = INTRINSIC_FUNCTIONS.get(call.name);
  if (fn === undefined) return `Unknown intrinsic function '${call.name}'.`;
  const count = call.args.length;
  if (count < fn.minArgs || count > fn.maxArgs)
    return `${call.name} ${arityText(fn.minArgs, fn.maxArgs)}, but ${count} ${count === 1 ? "was" : "were"} given.`;
  for (const arg of call.args) {
    if (arg.kind === "call") {
      const message = checkCall(arg);
      if (message !== undefined) return message;
    }
  }
  return undefined;
}

function arityText(min: number, max: number): string {
  const plural = (n: number) => `${n} argument${n === 1 ? "" : "s"}`;
  if (min === max) return `takes ${plural(min)}`;
  if (max === Infinity) return `takes at least ${plural(min)}`;
  return `takes ${min} to ${max} arguments`;
}

/** Calls already checked; parsed calls are cached, so each is checked once. */
const checked = new WeakSet<IntrinsicCall>();

/** Parses and checks a call, raising States.IntrinsicFailure when it is malformed. */
export function compileIntrinsic(text: string): IntrinsicCall {
  let call: IntrinsicCall;
  try {
    call = parseIntrinsic(text);
  } catch (error) {
    if (error instanceof IntrinsicSyntaxError)
      throw new StatesError("States.IntrinsicFailure", error.message);
    throw error;
  }
  if (checked.has(call)) return call;
  const problem = checkCall(call);
  if (problem !== undefined) throw new StatesError("States.IntrinsicFailure", problem);
  checked.add(call);
  return call;
}

export function evaluateIntrinsic(
  text: string,
  scope: PathScope,
  random: RandomSource,
  field?: string,
): Json {
  return evaluateCall(compileIntrinsic(text), scope, random, field);
}

/** Evaluates a call that `compileIntrinsic` returned. */
export function evaluateCall(
  call: IntrinsicCall,
  scope: PathScope,
  random: RandomSource,
  field: string | undefined,
): Json {
  const fn = INTRINSIC_FUNCTIONS.get(call.name)!;
  const args = call.args.map((arg) => evaluateArg(arg, scope, random, field));
  return fn.evaluate(args, { name: call.name, nodes: call.args, random });
}

function evaluateArg(
  arg: IntrinsicArg,
  scope: PathScope,
  random: RandomSource,
  field: string | undefined,
): Json {
  switch (arg.kind) {
    case "literal":
      return arg.value;
    case "call":
      return evaluateCall(arg, scope, random, field);
    case "path": {
      const result = readPath(arg.path, scope);
      // A path argument that selects nothing is a runtime error, not an intrinsic failure.
      if (!result.found)
        throw new StatesError("States.Runtime", missingPathCause(arg.path, scope, field));
      return result.value;
    }
  }
}
