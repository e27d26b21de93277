/**
 * Evaluation of JSONPath Choice rules (ASL spec, "Choice Rules"; AWS "Choice
 * workflow state"). JSONata `Condition` rules are not handled here.
 *
 * Errors, as AWS raises them (all `States.Runtime`, which no Retry/Catch handles):
 * - a `Variable` or `…Path` operand that matches nothing fails the state with
 *   "Invalid path '$.x': The choice state's condition path references an invalid
 *   value." `IsPresent` is the only operator that may probe a missing path;
 * - a `…Path` operand of the wrong type makes an equality (`…EqualsPath`) false,
 *   but fails an ordering comparison (`…LessThan…Path`, `…GreaterThan…Path`) with
 *   "Invalid value provided at path '$.x'". PROVISIONAL: our recordings have no
 *   such case; this follows the AWS outcomes noted in a third-party test definition
 *   (`StringGreaterThanPath` with both sides numbers failed with that text, while
 *   `StringEqualsPath` on two numbers, `NumericEqualsPath` from a number to a string
 *   and `StringGreaterThanPath` from a number to a string were all false).
 * - a malformed rule (no operator, two operators, a literal of the wrong type) is a
 *   definition error the validator should have refused; it fails the state too
 *   rather than crash the worker.
 *
 * `And` and `Or` stop at the first deciding rule, so an `IsPresent` guard ahead of
 * a comparison on the same path protects it, as the AWS docs' example relies on.
 */
import { StatesError } from "../core/errors.js";
import { isJsonObject, type Json, type JsonObject } from "../core/json.js";
import type { ChoiceRule } from "../core/definition.js";
import { lookupOperator, type ChoiceOperator, type ComparisonOperator } from "./operators.js";

/** What a path yields in the Choice state's scope: a value, or nothing at all. */
export type Resolution = { found: true; value: Json } | { found: false };

/**
 * Reads a path in the Choice state's scope: `$…` from the state input, `$$…` from
 * the context object, `$name…` from workflow variables. Supplied by the caller.
 */
export type PathResolver = (path: string) => Resolution;

/** The first rule of `choices` that holds, in order (its `Next` is where to go), if any. */
export function selectChoice(
  choices: readonly ChoiceRule[],
  resolve: PathResolver,
): ChoiceRule | undefined {
  return choices.find((rule) => evaluateChoiceRule(rule, resolve));
}

/** Whether `rule` holds. Throws StatesError("States.Runtime", …) as described above. */
export function evaluateChoiceRule(rule: ChoiceRule, resolve: PathResolver): boolean {
  return evaluate(rule, resolve);
}

function evaluate(rule: JsonObject, resolve: PathResolver): boolean {
  const and = rule["And"];
  if (and !== undefined) return subRules(and, "And").every((r) => evaluate(r, resolve));
  const or = rule["Or"];
  if (or !== undefined) return subRules(or, "Or").some((r) => evaluate(r, resolve));
  const not = rule["Not"];
  if (not !== undefined) {
    if (!isJsonObject(not)) throw invalidRule("'Not' must be a single Choice rule");
    return !evaluate(not, resolve);
  }
  return evaluateComparison(rule, resolve);
}

function subRules(value: Json, field: "And" | "Or"): JsonObject[] {
  if (!Array.isArray(value) || value.length === 0 || !value.every(isJsonObject)) {
    throw invalidRule(`'${field}' must be a non-empty array of Choice rules`);
  }
  return value;
}

function evaluateComparison(rule: JsonObject, resolve: PathResolver): boolean {
  const path = rule["Variable"];
  if (typeof path !== "string") throw invalidRule("a comparison needs a string 'Variable'");
  const [name, operator] = findOperator(rule);
  const operand = rule[name]!;
  const variable = resolve(path);

  if (operator.kind === "presence") return variable.found === booleanOperand(name, operand);
  if (!variable.found) throw invalidPath(path);
  if (operator.kind === "typeTest") {
    return operator.test(variable.value) === booleanOperand(name, operand);
  }
  return compare(name, operator, variable.value, operand, resolve);
}

function compare(
  name: string,
  operator: ComparisonOperator,
  variable: Json,
  operand: Json,
  resolve: PathResolver,
): boolean {
  if (operator.operand === "literal") {
    const outcome = operator.apply(variable, operand);
    if (outcome.kind === "operandMistyped") {
      throw invalidRule(`'${name}' requires a ${operator.type} value`);
    }
    return outcome.result;
  }
  if (typeof operand !== "string") throw invalidRule(`'${name}' requires a path`);
  const target = resolve(operand);
  if (!target.found) throw invalidPath(operand);
  const outcome = operator.apply(variable, target.value);
  if (outcome.kind === "compared") return outcome.result;
  if (operator.ordering) {
    throw new StatesError("States.Runtime", `Invalid value provided at path '${operand}'`);
  }
  return false;
}

/** The rule's one operator field. */
function findOperator(rule: JsonObject): [string, ChoiceOperator] {
  const found: [string, ChoiceOperator][] = [];
  for (const key of Object.keys(rule)) {
    const operator = lookupOperator(key);
    if (operator !== undefined) found.push([key, operator]);
  }
  const [only] = found;
  if (only === undefined || found.length > 1) {
    throw invalidRule("a comparison needs exactly one comparison operator");
  }
  return only;
}

function booleanOperand(name: string, operand: Json): boolean {
  if (typeof operand !== "boolean") throw invalidRule(`'${name}' requires true or false`);
  return operand;
}

/** AWS's text for a path that matches nothing (the state name and event id are the caller's to prefix). */
export function invalidPath(path: string): StatesError {
  return new StatesError(
    "States.Runtime",
    `Invalid path '${path}': The choice state's condition path references an invalid value.`,
  );
}

function invalidRule(message: string): StatesError {
  return new StatesError("States.Runtime", `Invalid Choice rule: ${message}.`);
}
