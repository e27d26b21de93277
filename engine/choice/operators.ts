/**
 * The JSONPath Choice rule operators (ASL spec, "Choice Rules"; AWS "Choice workflow
 * state"), one table entry per operator name. Each entry says what type the
 * variable must have and how the two sides compare; `evaluate.ts` does the path
 * resolution and the error handling around them.
 *
 * AWS type rules, checked against the recorded operator matrix in
 * test/conformance/data (localstack `choice_operators` snapshots):
 * - a comparison whose variable is not of the operator's type is false, never an
 *   error ("Step Functions doesn't attempt to match a numeric field to a string
 *   value"): `NumericEquals` on "0", `StringEquals` on false, `BooleanEquals` on 1;
 * - numbers compare by value, so 0 equals 0.0 and 1 equals 1.0;
 * - strings compare by UTF-16 code units, as the docs' reference to Java's
 *   `String.compareTo` says (JavaScript's `<` does the same);
 * - timestamps compare by instant (see `timestamp.ts`);
 * - `Is*` tests take a boolean operand: `IsNumeric` is true for numbers only (not
 *   numeric strings), `IsString` for any string, timestamps included.
 */
import type { Json } from "../core/json.js";
import { compareInstants, isTimestamp, parseTimestamp, type Instant } from "./timestamp.js";
import { wildcardMatches } from "./wildcard.js";

export type ValueTypeName = "string" | "number" | "boolean" | "timestamp";

/** The outcome of applying a comparison to a variable and an operand value. */
export type ComparisonOutcome =
  | { readonly kind: "compared"; readonly result: boolean }
  /** The operand (the literal or what the `…Path` points to) is not of the operator's type. */
  | { readonly kind: "operandMistyped" };

export interface ComparisonOperator {
  readonly kind: "comparison";
  /** The type both sides must have. */
  readonly type: ValueTypeName;
  /** `literal`: the operand is the field's value; `path`: a path resolved against the same scope. */
  readonly operand: "literal" | "path";
  /** `…LessThan…` / `…GreaterThan…`: they treat a mistyped path operand as an error (evaluate.ts). */
  readonly ordering: boolean;
  apply(variable: Json, operand: Json): ComparisonOutcome;
}

/** `IsNull`, `IsNumeric`, `IsString`, `IsBoolean`, `IsTimestamp`: a type test on a present value. */
export interface TypeTestOperator {
  readonly kind: "typeTest";
  test(value: Json): boolean;
}

/** `IsPresent`: the one operator that may look at a missing path. */
export interface PresenceOperator {
  readonly kind: "presence";
}

export type ChoiceOperator = ComparisonOperator | TypeTestOperator | PresenceOperator;

/** How a JSON value is read as one of the comparable types, and how two such values order. */
interface ValueType<T> {
  readonly name: ValueTypeName;
  /** The value as this type, or undefined when it is not of this type. */
  read(value: Json): T | undefined;
  compare(a: T, b: T): number;
}

function order<T extends string | number>(a: T, b: T): number {
  return a === b ? 0 : a < b ? -1 : 1;
}

const STRING: ValueType<string> = {
  name: "string",
  read: (value) => (typeof value === "string" ? value : undefined),
  compare: order,
};

const NUMBER: ValueType<number> = {
  name: "number",
  read: (value) => (typeof value === "number" ? value : undefined),
  compare: order,
};

const BOOLEAN: ValueType<boolean> = {
  name: "boolean",
  read: (value) => (typeof value === "boolean" ? value : undefined),
  compare: (a, b) => order(Number(a), Number(b)),
};

const TIMESTAMP: ValueType<Instant> = {
  name: "timestamp",
  read: (value) => (typeof value === "string" ? parseTimestamp(value) : undefined),
  compare: compareInstants,
};

type Relation = "Equals" | "LessThan" | "GreaterThan" | "LessThanEquals" | "GreaterThanEquals";

const RELATIONS: Record<Relation, (order: number) => boolean> = {
  Equals: (c) => c === 0,
  LessThan: (c) => c < 0,
  GreaterThan: (c) => c > 0,
  LessThanEquals: (c) => c <= 0,
  GreaterThanEquals: (c) => c >= 0,
};

/** A comparison on `type`: the relation applied to `type.compare`. */
function comparison<T>(
  type: ValueType<T>,
  relation: Relation,
  operand: "literal" | "path",
): ComparisonOperator {
  const holds = RELATIONS[relation];
  return compareWith(type, operand, relation !== "Equals", (a, b) => holds(type.compare(a, b)));
}

function compareWith<T>(
  type: ValueType<T>,
  operand: "literal" | "path",
  ordering: boolean,
  test: (variable: T, operand: T) => boolean,
): ComparisonOperator {
  return {
    kind: "comparison",
    type: type.name,
    operand,
    ordering,
    apply(variable, operandValue) {
      const b = type.read(operandValue);
      if (b === undefined) return { kind: "operandMistyped" };
      const a = type.read(variable);
      return { kind: "compared", result: a !== undefined && test(a, b) };
    },
  };
}

function typeTest(test: (value: Json) => boolean): TypeTestOperator {
  return { kind: "typeTest", test };
}

const L = "literal";
const P = "path";

/** Every JSONPath Choice operator by name. `And`/`Or`/`Not` are combinators, not operators. */
export const OPERATORS: Readonly<Record<string, ChoiceOperator>> = {
  StringEquals: comparison(STRING, "Equals", L),
  StringEqualsPath: comparison(STRING, "Equals", P),
  StringLessThan: comparison(STRING, "LessThan", L),
  StringLessThanPath: comparison(STRING, "LessThan", P),
  StringGreaterThan: comparison(STRING, "GreaterThan", L),
  StringGreaterThanPath: comparison(STRING, "GreaterThan", P),
  StringLessThanEquals: comparison(STRING, "LessThanEquals", L),
  StringLessThanEqualsPath: comparison(STRING, "LessThanEquals", P),
  StringGreaterThanEquals: comparison(STRING, "GreaterThanEquals", L),
  StringGreaterThanEqualsPath: comparison(STRING, "GreaterThanEquals", P),
  // The ASL spec defines no `StringMatchesPath`.
  StringMatches: compareWith(STRING, L, false, wildcardMatches),

  NumericEquals: comparison(NUMBER, "Equals", L),
  NumericEqualsPath: comparison(NUMBER, "Equals", P),
  NumericLessThan: comparison(NUMBER, "LessThan", L),
  NumericLessThanPath: comparison(NUMBER, "LessThan", P),
  NumericGreaterThan: comparison(NUMBER, "GreaterThan", L),
  NumericGreaterThanPath: comparison(NUMBER, "GreaterThan", P),
  NumericLessThanEquals: comparison(NUMBER, "LessThanEquals", L),
  NumericLessThanEqualsPath: comparison(NUMBER, "LessThanEquals", P),
  NumericGreaterThanEquals: comparison(NUMBER, "GreaterThanEquals", L),
  NumericGreaterThanEqualsPath: comparison(NUMBER, "GreaterThanEquals", P),

  BooleanEquals: comparison(BOOLEAN, "Equals", L),
  BooleanEqualsPath: comparison(BOOLEAN, "Equals", P),

  TimestampEquals: comparison(TIMESTAMP, "Equals", L),
  TimestampEqualsPath: comparison(TIMESTAMP, "Equals", P),
  TimestampLessThan: comparison(TIMESTAMP, "LessThan", L),
  TimestampLessThanPath: comparison(TIMESTAMP, "LessThan", P),
  TimestampGreaterThan: comparison(TIMESTAMP, "GreaterThan", L),
  TimestampGreaterThanPath: comparison(TIMESTAMP, "GreaterThan", P),
  TimestampLessThanEquals: comparison(TIMESTAMP, "LessThanEquals", L),
  TimestampLessThanEqualsPath: comparison(TIMESTAMP, "LessThanEquals", P),
  TimestampGreaterThanEquals: comparison(TIMESTAMP, "GreaterThanEquals", L),
  TimestampGreaterThanEqualsPath: comparison(TIMESTAMP, "GreaterThanEquals", P),

  IsNull: typeTest((value) => value === null),
  IsPresent: { kind: "presence" },
  IsNumeric: typeTest((value) => typeof value === "number"),
  IsString: typeTest((value) => typeof value === "string"),
  IsBoolean: typeTest((value) => typeof value === "boolean"),
  IsTimestamp: typeTest(isTimestamp),
};

/** The operator named `name`, if it is one (own keys only: "toString" is not an operator). */
export function lookupOperator(name: string): ChoiceOperator | undefined {
  return Object.hasOwn(OPERATORS, name) ? OPERATORS[name] : undefined;
}
