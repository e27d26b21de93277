import { ref, type SchemaObject } from "./common.js";

/**
 * Choice state (ASL spec, "Choice State"; AWS "Choice workflow state").
 *
 * JSONPath rules compare `Variable` with one operator, or combine rules with
 * And/Or/Not; JSONata rules have a `Condition`. A top-level rule needs `Next`; rules
 * nested in And/Or/Not must not have one. How many operators a rule has, and whether
 * `Variable` goes with them, is checked by checks/choice-rules.ts, which reads the same
 * table.
 */

/** What an operator's operand must be. `path`: a reference path (the `…Path` forms). */
export type OperandKind = "string" | "number" | "boolean" | "timestamp" | "path";

const COMPARISONS: readonly (readonly [string, OperandKind])[] = [
  ["StringEquals", "string"],
  ["StringLessThan", "string"],
  ["StringGreaterThan", "string"],
  ["StringLessThanEquals", "string"],
  ["StringGreaterThanEquals", "string"],
  ["NumericEquals", "number"],
  ["NumericLessThan", "number"],
  ["NumericGreaterThan", "number"],
  ["NumericLessThanEquals", "number"],
  ["NumericGreaterThanEquals", "number"],
  ["BooleanEquals", "boolean"],
  ["TimestampEquals", "timestamp"],
  ["TimestampLessThan", "timestamp"],
  ["TimestampGreaterThan", "timestamp"],
  ["TimestampLessThanEquals", "timestamp"],
  ["TimestampGreaterThanEquals", "timestamp"],
];

/** Every comparison operator of a JSONPath Choice rule, keyed by name. */
export const CHOICE_OPERATORS: Readonly<Record<string, OperandKind>> = Object.fromEntries([
  ...COMPARISONS,
  ...COMPARISONS.map(([name]) => [`${name}Path`, "path"] as const),
  // StringMatches takes a pattern with * wildcards and has no …Path form.
  ["StringMatches", "string"],
  // The Is… tests take true or false.
  ["IsNull", "boolean"],
  ["IsPresent", "boolean"],
  ["IsNumeric", "boolean"],
  ["IsString", "boolean"],
  ["IsBoolean", "boolean"],
  ["IsTimestamp", "boolean"],
]);

const OPERAND_SCHEMAS: Record<OperandKind, SchemaObject> = {
  string: { type: "string", description: "a string" },
  number: { type: "number", description: "a number" },
  boolean: { type: "boolean", description: "true or false" },
  timestamp: ref("timestamp"),
  path: ref("referencePath"),
};

const operatorProperties = Object.fromEntries(
  Object.entries(CHOICE_OPERATORS).map(([name, kind]) => [name, OPERAND_SCHEMAS[kind]]),
);

export const choiceDefs: Record<string, SchemaObject> = {
  /** The comparison part every JSONPath rule shares. */
  choiceRuleBody: {
    type: "object",
    properties: {
      Variable: ref("referencePath"),
      And: {
        type: "array",
        minItems: 1,
        items: ref("nestedChoiceRule"),
        description: "a non-empty array of rules",
      },
      Or: {
        type: "array",
        minItems: 1,
        items: ref("nestedChoiceRule"),
        description: "a non-empty array of rules",
      },
      Not: ref("nestedChoiceRule"),
      Comment: ref("comment"),
      ...operatorProperties,
    },
  },
  /** A rule in the Choices array: needs Next; may assign variables (and, JSONata, shape Output). */
  choiceRule: {
    allOf: [ref("choiceRuleBody")],
    properties: {
      Next: ref("stateName"),
      Condition: {
        anyOf: [ref("jsonata"), { type: "boolean" }],
        description: 'a JSONata expression "{% ... %}"',
      },
      Assign: ref("assign"),
      Output: true,
    },
    required: ["Next"],
    unevaluatedProperties: false,
  },
  /** A rule inside And, Or or Not: no Next, no Assign. */
  nestedChoiceRule: {
    allOf: [ref("choiceRuleBody")],
    unevaluatedProperties: false,
  },
};

export const choiceState: SchemaObject = {
  allOf: [ref("stateBase"), ref("inputOutput"), ref("variablesAndOutput")],
  properties: {
    Type: { const: "Choice" },
    Choices: {
      type: "array",
      minItems: 1,
      items: ref("choiceRule"),
      description: "a non-empty array of Choice rules",
    },
    Default: ref("stateName"),
  },
  required: ["Choices"],
  unevaluatedProperties: false,
};
