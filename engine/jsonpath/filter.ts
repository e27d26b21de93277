import type { Json } from "../core/json.js";
import { jsonEqual } from "../core/json.js";
import type { FilterExpr, FilterOperand } from "./ast.js";
import type { PathBudget } from "./budget.js";
import { evaluateSegments } from "./evaluate.js";
import { FilterRegex } from "./parse-filter.js";

/**
 * Jayway filter predicates (`[?(@.price < 10 && @.tag == 'x')]`). A path that
 * selects nothing is "undefined": every comparison with it is false except `!=`
 * and `nin`, which Jayway defines as the negation of `==` and `in`.
 */
type Value = Json | FilterRegex | undefined;
type Operator = (left: Value, right: Value) => boolean;

export function testFilter(
  expr: FilterExpr,
  item: Json,
  document: Json,
  budget: PathBudget,
): boolean {
  switch (expr.kind) {
    case "and":
      return (
        testFilter(expr.left, item, document, budget) &&
        testFilter(expr.right, item, document, budget)
      );
    case "or":
      return (
        testFilter(expr.left, item, document, budget) ||
        testFilter(expr.right, item, document, budget)
      );
    case "not":
      return !testFilter(expr.operand, item, document, budget);
    case "exists":
      return resolve(expr.operand, item, document, budget) !== undefined;
    case "compare": {
      const left = resolve(expr.left, item, document, budget);
      const right = resolve(expr.right, item, document, budget);
      // A regex reads the whole string (linear time, core/re2.ts): charged as visits.
      if (expr.op === "=~" && typeof left === "string") budget.charge(left.length >> 6);
      return OPERATORS[expr.op]!(left, right);
    }
  }
}

function resolve(operand: FilterOperand, item: Json, document: Json, budget: PathBudget): Value {
  switch (operand.kind) {
    case "literal":
      return operand.value;
    case "regex":
      return operand.regex;
    case "path": {
      const result = evaluateSegments(
        operand.segments,
        operand.definite,
        operand.relative ? item : document,
        document,
        budget,
      );
      return result.found ? result.value : undefined;
    }
  }
}

const isJson = (v: Value): v is Json => v !== undefined && !(v instanceof FilterRegex);

/**
 * Jayway compares a number with a numeric string by value (NumberNode.equals
 * accepts a StringNode); otherwise values are equal when structurally equal.
 */
function equals(left: Value, right: Value): boolean {
  if (!isJson(left) || !isJson(right)) return false;
  if (typeof left === "number" && typeof right === "string")
    return right.trim() !== "" && Number(right) === left;
  if (typeof left === "string" && typeof right === "number")
    return left.trim() !== "" && Number(left) === right;
  return jsonEqual(left, right);
}

/** `<`, `>`…: numbers with numbers, strings with strings (Java compareTo); anything else is false. */
function ordered(test: (order: number) => boolean): Operator {
  return (left, right) => {
    if (typeof left === "number" && typeof right === "number") return test(left - right);
    if (typeof left === "string" && typeof right === "string")
      return test(left < right ? -1 : left > right ? 1 : 0);
    return false;
  };
}

function contains(list: Value, value: Value): boolean {
  return Array.isArray(list) && list.some((x) => equals(value, x));
}

function lengthOf(value: Value): number | undefined {
  return typeof value === "string" || Array.isArray(value) ? value.length : undefined;
}

const OPERATORS: Readonly<Record<string, Operator>> = {
  "==": equals,
  "!=": (l, r) => !equals(l, r),
  "<": ordered((o) => o < 0),
  "<=": ordered((o) => o <= 0),
  ">": ordered((o) => o > 0),
  ">=": ordered((o) => o >= 0),
  "=~": (l, r) => typeof l === "string" && r instanceof FilterRegex && r.matches(l),
  in: (l, r) => contains(r, l),
  nin: (l, r) => !contains(r, l),
  subsetof: (l, r) => Array.isArray(l) && l.every((x) => contains(r, x)),
  anyof: (l, r) => Array.isArray(l) && l.some((x) => contains(r, x)),
  noneof: (l, r) => Array.isArray(l) && !l.some((x) => contains(r, x)),
  size: (l, r) => typeof r === "number" && lengthOf(l) === r,
  empty: (l, r) => typeof r === "boolean" && lengthOf(l) !== undefined && (lengthOf(l) === 0) === r,
};

/** For the parser's tests: every operator has an implementation. */
export const FILTER_OPERATORS: readonly string[] = Object.keys(OPERATORS);
