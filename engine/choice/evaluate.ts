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
  for (const rule of choices) if (evaluate(compile(rule), resolve)) return rule;
  return undefined;
}

/** Whether `rule` holds. Throws StatesError("States.Runtime", …) as described above. */
export function evaluateChoiceRule(rule: ChoiceRule, resolve: PathResolver): boolean {
  return evaluate(compile(rule), resolve);
}

/**
 * A rule prepared once: combinators split and the operator looked up. A malformed
 * rule keeps its error and raises it only when evaluation reaches it, as the
 * unprepared walk did: behind an earlier match or a false `And` it fails nothing.
 */
type Node =
  | { readonly kind: "and" | "or"; readonly rules: readonly Node[] }
  | { readonly kind: "not"; readonly rule: Node }
  | {
      readonly kind: "comparison";
      readonly variable: string;
      readonly name: string;
      readonly operator: ChoiceOperator;
      readonly operand: Json;
    }
  | { readonly kind: "invalid"; readonly message: string };

/** Rules belong to a definition, which nothing mutates once compiled into a program. */
const compiled = new WeakMap<JsonObject, Node>();

function compile(rule: JsonObject): Node {
  let node = compiled.get(rule);
  if (node === undefined) {
    node = compileRule(rule);
    compiled.set(rule, node);
  }
  return node;
}

function compileRule(rule: JsonObject): Node {
  const and = rule["And"];
  if (and !== undefined) return combination("and", and, "And");
  const or = rule["Or"];
  if (or !== undefined) return combination("or", or, "Or");
  const not = rule["Not"];
  if (not !== undefined) {
    if (!isJsonObject(not))
      return { kind: "invalid", message: "'Not' must be a single Choice rule" };
    return { kind: "not", rule: compile(not) };
  }
  const variable = rule["Variable"];
  if (typeof variable !== "string")
    return { kind: "invalid", message: "a comparison needs a string 'Variable'" };
  const found = findOperator(rule);
  if (found === undefined)
    return { kind: "invalid", message: "a comparison needs exactly one comparison operator" };
  const [name, operator] = found;
  return { kind: "comparison", variable, name, operator, operand: rule[name]! };
}

function combination(kind: "and" | "or", value: Json, field: "And" | "Or"): Node {
  if (!Array.isArray(value) || value.length === 0 || !value.every(isJsonObject)) {
    return { kind: "invalid", message: `'${field}' must be a non-empty array of Choice rules` };
  }
  return { kind, rules: value.map(compile) };
}

function evaluate(node: Node, resolve: PathResolver): boolean {
  switch (node.kind) {
    case "and":
      for (const rule of node.rules) if (!evaluate(rule, resolve)) return false;
      return true;
    case "or":
      for (const rule of node.rules) if (evaluate(rule, resolve)) return true;
      return false;
    case "not":
      return !evaluate(node.rule, resolve);
    case "comparison":
      return evaluateComparison(node, resolve);
    case "invalid":
      throw invalidRule(node.message);
  }
}

function evaluateComparison(
  rule: Extract<Node, { kind: "comparison" }>,
  resolve: PathResolver,
): boolean {
  const { variable: path, name, operator, operand } = rule;
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

/** The rule's one operator field; undefined when it has none or several. */
function findOperator(rule: JsonObject): [string, ChoiceOperator] | undefined {
  let found: [string, ChoiceOperator] | undefined;
  for (const key of Object.keys(rule)) {
    const operator = lookupOperator(key);
    if (operator === undefined) continue;
    if (found !== undefined) return undefined;
    found = [key, operator];
  }
  return found;
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
