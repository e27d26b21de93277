import { describe, expect, it } from "vitest";
import {
  evaluateChoiceRule,
  selectChoice,
  type PathResolver,
} from "../../engine/choice/evaluate.js";
import { OPERATORS } from "../../engine/choice/operators.js";
import { compareInstants, parseTimestamp } from "../../engine/choice/timestamp.js";
import { wildcardMatches, wildcardSegments } from "../../engine/choice/wildcard.js";
import type { ChoiceRule } from "../../engine/core/definition.js";
import { StatesError } from "../../engine/core/errors.js";
import type { Json } from "../../engine/core/json.js";

/** A scope that knows exactly the given paths; anything else is missing. */
function scope(values: Record<string, Json>): PathResolver {
  return (path) =>
    Object.hasOwn(values, path) ? { found: true, value: values[path]! } : { found: false };
}

/** `{Variable: "$.v", op: operand}`, or for `…Path` operators `op: "$.o"` with `$.o` = operand. */
function check(op: string, variable: Json, operand: Json): boolean {
  const isPath = op.endsWith("Path");
  const rule: ChoiceRule = { Variable: "$.v", [op]: isPath ? "$.o" : operand };
  return evaluateChoiceRule(
    rule,
    scope(isPath ? { "$.v": variable, "$.o": operand } : { "$.v": variable }),
  );
}

function failure(run: () => unknown): { error: string; cause: string } {
  try {
    run();
  } catch (err) {
    if (err instanceof StatesError) return { error: err.error, cause: err.cause };
    throw err;
  }
  throw new Error("expected a StatesError");
}

const T0 = "2012-10-09T19:00:55Z";
const T1 = "2012-10-09T19:00:56Z";

type Row = [op: string, variable: Json, operand: Json, expected: boolean];

const COMPARISONS: Row[] = [
  ["StringEquals", "abc", "abc", true],
  ["StringEquals", "abc", "abd", false],
  ["StringEquals", 1, "1", false],
  ["StringEquals", null, "", false],
  ["StringEquals", ["abc"], "abc", false],
  ["StringEqualsPath", "abc", "abc", true],
  ["StringEqualsPath", "a", "b", false],
  ["StringLessThan", "A", "AB", true],
  ["StringLessThan", "AB", "A", false],
  ["StringLessThan", "", "", false],
  ["StringLessThan", "B", "a", true], // code units: 'B' (66) < 'a' (97)
  ["StringLessThan", "\u{1F600}", "\uFFFF", true], // UTF-16 order, as Java's compareTo
  ["StringLessThanPath", "A", "AB", true],
  ["StringGreaterThan", "b", "a", true],
  ["StringGreaterThan", "a", "a", false],
  ["StringGreaterThan", 5, "a", false],
  ["StringGreaterThanPath", "A", "A\t\n\r", false],
  ["StringLessThanEquals", "a", "a", true],
  ["StringLessThanEquals", "b", "a", false],
  ["StringLessThanEqualsPath", "", "", true],
  ["StringGreaterThanEquals", "a", "a", true],
  ["StringGreaterThanEquals", "a", "b", false],
  ["StringGreaterThanEqualsPath", "AB", "A", true],
  ["StringMatches", "log-1.txt", "log-*.txt", true],
  ["StringMatches", 7, "*", false],

  ["NumericEquals", 1, 1.0, true],
  ["NumericEquals", 0, -0, true],
  ["NumericEquals", 1.1, 1, false],
  ["NumericEquals", "1", 1, false],
  ["NumericEquals", true, 1, false],
  ["NumericEquals", null, 0, false],
  ["NumericEqualsPath", 0, 0.0, true],
  ["NumericEqualsPath", [], 1, false],
  ["NumericLessThan", 1, 2, true],
  ["NumericLessThan", 2, 2, false],
  ["NumericLessThan", -1.5, -1, true],
  ["NumericLessThanPath", 0, 1, true],
  ["NumericGreaterThan", 2.5, 2, true],
  ["NumericGreaterThan", 2, 2, false],
  ["NumericGreaterThanPath", 1, 0, true],
  ["NumericLessThanEquals", 2, 2, true],
  ["NumericLessThanEquals", 3, 2, false],
  ["NumericLessThanEqualsPath", 0, 0, true],
  ["NumericGreaterThanEquals", 2, 2, true],
  ["NumericGreaterThanEquals", 1e3, 999.9, true],
  ["NumericGreaterThanEqualsPath", 1, 2, false],

  ["BooleanEquals", true, true, true],
  ["BooleanEquals", false, true, false],
  ["BooleanEquals", "true", true, false],
  ["BooleanEquals", 1, true, false],
  ["BooleanEquals", 0, false, false],
  ["BooleanEqualsPath", false, false, true],
  ["BooleanEqualsPath", null, false, false],

  ["TimestampEquals", T0, T0, true],
  ["TimestampEquals", "2012-10-09T20:00:55+01:00", T0, true],
  ["TimestampEquals", "2012-10-09T19:00:55.000Z", T0, true],
  ["TimestampEquals", "2012-10-09T19:00:55", T0, false], // no offset: not a timestamp
  ["TimestampEquals", 0, T0, false],
  ["TimestampEquals", T0, T1, false],
  ["TimestampEqualsPath", "2012-10-09T14:30:55-04:30", T0, true],
  ["TimestampLessThan", T0, T1, true],
  ["TimestampLessThan", T0, T0, false],
  ["TimestampLessThan", "2012-10-09T19:00:55.1Z", "2012-10-09T19:00:55.09Z", false],
  ["TimestampLessThan", "2012-10-09T23:30:00-01:00", "2012-10-10T00:00:00Z", false],
  ["TimestampLessThanPath", T1, T0, false],
  ["TimestampGreaterThan", "2012-10-10T00:30:00+01:00", "2012-10-09T23:00:00Z", true],
  [
    "TimestampGreaterThan",
    "2012-10-09T19:00:55.123456789Z",
    "2012-10-09T19:00:55.123456788Z",
    true,
  ],
  ["TimestampGreaterThanPath", T1, T0, true],
  ["TimestampLessThanEquals", "2012-10-09T21:00:55+02:00", T0, true],
  ["TimestampLessThanEqualsPath", T1, T0, false],
  ["TimestampGreaterThanEquals", "2012-10-09T17:00:55-02:00", T0, true],
  ["TimestampGreaterThanEqualsPath", T0, T1, false],

  ["IsNull", null, true, true],
  ["IsNull", 0, true, false],
  ["IsNull", null, false, false],
  ["IsNull", "", false, true],
  ["IsNumeric", 1.5, true, true],
  ["IsNumeric", "1", true, false], // numbers only, not numeric strings
  ["IsNumeric", null, false, true],
  ["IsString", "", true, true],
  ["IsString", T0, true, true],
  ["IsString", 1, true, false],
  ["IsBoolean", false, true, true],
  ["IsBoolean", "true", true, false],
  ["IsBoolean", false, false, false],
  ["IsTimestamp", T0, true, true],
  ["IsTimestamp", "2023-02-24", true, false],
  ["IsTimestamp", 1349809255, false, true],
  ["IsPresent", null, true, true],
  ["IsPresent", {}, false, false],
];

describe("comparison operators", () => {
  it.each(COMPARISONS)("%s: %j against %j is %s", (op, variable, operand, expected) => {
    expect(check(op, variable, operand)).toBe(expected);
  });

  it("has a row for every operator in the table", () => {
    const covered = new Set(COMPARISONS.map(([op]) => op));
    expect(Object.keys(OPERATORS).filter((op) => !covered.has(op))).toEqual([]);
  });
});

describe("missing paths", () => {
  const invalid = (path: string) => ({
    error: "States.Runtime",
    cause: `Invalid path '${path}': The choice state's condition path references an invalid value.`,
  });

  it("IsPresent is the only operator that may probe a missing path", () => {
    const empty = scope({});
    expect(evaluateChoiceRule({ Variable: "$.x", IsPresent: true }, empty)).toBe(false);
    expect(evaluateChoiceRule({ Variable: "$.x", IsPresent: false }, empty)).toBe(true);
  });

  it.each([
    "StringEquals",
    "NumericLessThan",
    "BooleanEquals",
    "IsNull",
    "IsString",
    "IsTimestamp",
  ])("%s on a missing variable fails with States.Runtime", (op) => {
    const operand =
      op.startsWith("Is") || op === "BooleanEquals" ? true : op.startsWith("String") ? "a" : 1;
    expect(
      failure(() => evaluateChoiceRule({ Variable: "$.x", [op]: operand }, scope({}))),
    ).toEqual(invalid("$.x"));
  });

  it("a …Path operand that matches nothing fails, naming the operand path", () => {
    const rule = { Variable: "$.v", NumericEqualsPath: "$.missing" };
    expect(failure(() => evaluateChoiceRule(rule, scope({ "$.v": 1 })))).toEqual(
      invalid("$.missing"),
    );
  });

  it("the variable is looked up before the operand path", () => {
    const rule = { Variable: "$.a", StringEqualsPath: "$.b" };
    expect(failure(() => evaluateChoiceRule(rule, scope({})))).toEqual(invalid("$.a"));
  });
});

describe("…Path operands of the wrong type", () => {
  it.each<Row>([
    ["StringEqualsPath", 1, 1, false],
    ["NumericEqualsPath", 1, "1", false],
    ["NumericEqualsPath", "1", "1", false],
    ["BooleanEqualsPath", true, "true", false],
    ["TimestampEqualsPath", T0, "2012-10-09", false],
    ["StringGreaterThanPath", 1, "a", false], // only the variable is mistyped
  ])("%s: %j against %j is %s", (op, variable, operand, expected) => {
    expect(check(op, variable, operand)).toBe(expected);
  });

  it.each<[string, Json, Json]>([
    ["StringGreaterThanPath", 1, 2],
    ["StringLessThanEqualsPath", "a", 2],
    ["NumericLessThanPath", 1, "2"],
    ["TimestampLessThanPath", T0, "2012-10-09"],
  ])("%s: %j against %j fails the state (ordering comparisons)", (op, variable, operand) => {
    expect(failure(() => check(op, variable, operand))).toEqual({
      error: "States.Runtime",
      cause: "Invalid value provided at path '$.o'",
    });
  });
});

describe("malformed rules fail with States.Runtime", () => {
  it.each<[string, ChoiceRule]>([
    ["a literal of the wrong type", { Variable: "$.v", NumericEquals: "abc" }],
    ["a non-timestamp literal", { Variable: "$.v", TimestampEquals: "yesterday" }],
    ["an Is… test without a boolean", { Variable: "$.v", IsNull: "yes" }],
    ["no operator", { Variable: "$.v", Next: "X" }],
    ["an inherited name is no operator", { Variable: "$.v", toString: 1 }],
    ["two operators", { Variable: "$.v", NumericEquals: 1, NumericLessThan: 2 }],
    ["a non-string Variable", { Variable: 1, NumericEquals: 1 } as unknown as ChoiceRule],
    ["an empty And", { And: [] }],
    ["an Or that is no array", { Or: { Variable: "$.v", IsNull: true } }],
    ["a Not that is an array", { Not: [{ Variable: "$.v", IsNull: true }] }],
    ["a …Path operand that is no string", { Variable: "$.v", NumericEqualsPath: 1 }],
  ])("%s", (_name, rule) => {
    expect(failure(() => evaluateChoiceRule(rule, scope({ "$.v": 1 }))).error).toBe(
      "States.Runtime",
    );
  });
});

describe("And / Or / Not", () => {
  const input = scope({ "$.type": "Private", "$.value": 22, "$.flag": true });
  const value = (op: string, operand: Json): ChoiceRule => ({ Variable: "$.value", [op]: operand });
  const inTwenties: ChoiceRule = {
    And: [value("NumericGreaterThanEquals", 20), value("NumericLessThan", 30)],
  };

  it.each<[string, ChoiceRule, boolean]>([
    ["And, all hold", inTwenties, true],
    [
      "And, one fails",
      { And: [value("NumericGreaterThanEquals", 20), value("NumericLessThan", 21)] },
      false,
    ],
    ["Or, one holds", { Or: [value("NumericEquals", 0), value("NumericEquals", 22)] }, true],
    ["Or, none holds", { Or: [value("NumericEquals", 0), value("NumericEquals", 1)] }, false],
    ["Not", { Not: { Variable: "$.type", StringEquals: "Private" } }, false],
    ["Not Not", { Not: { Not: { Variable: "$.type", StringEquals: "Private" } } }, true],
    [
      "nested",
      {
        Not: {
          And: [
            { Or: [{ Variable: "$.flag", BooleanEquals: false }, inTwenties] },
            { Not: { Variable: "$.type", StringMatches: "Pub*" } },
          ],
        },
      },
      false,
    ],
    ["a single-rule And", { And: [{ Variable: "$.flag", IsBoolean: true }] }, true],
  ])("%s", (_name, rule, expected) => {
    expect(evaluateChoiceRule(rule, input)).toBe(expected);
  });

  it("And stops at the first false rule, so IsPresent can guard a comparison", () => {
    const rule: ChoiceRule = {
      And: [
        { Variable: "$.maybe", IsPresent: true },
        { Variable: "$.maybe", StringEquals: "foo" },
      ],
    };
    expect(evaluateChoiceRule(rule, scope({}))).toBe(false);
    expect(evaluateChoiceRule(rule, scope({ "$.maybe": "foo" }))).toBe(true);
  });

  it("Or stops at the first true rule", () => {
    const rule: ChoiceRule = {
      Or: [
        { Variable: "$.maybe", IsPresent: false },
        { Variable: "$.maybe", StringEquals: "foo" },
      ],
    };
    expect(evaluateChoiceRule(rule, scope({}))).toBe(true);
  });

  it("a rule reached after the guard still fails on a missing path", () => {
    const rule: ChoiceRule = {
      And: [
        { Variable: "$.flag", IsBoolean: true },
        { Variable: "$.x", IsNull: true },
      ],
    };
    expect(failure(() => evaluateChoiceRule(rule, input)).error).toBe("States.Runtime");
  });
});

describe("selectChoice", () => {
  // AWS "Choice workflow state", the ChoiceStateX example.
  const choices: ChoiceRule[] = [
    { Not: { Variable: "$.type", StringEquals: "Private" }, Next: "Public" },
    { Variable: "$.value", NumericEquals: 0, Next: "ValueIsZero" },
    {
      And: [
        { Variable: "$.value", NumericGreaterThanEquals: 20 },
        { Variable: "$.value", NumericLessThan: 30 },
      ],
      Next: "ValueInTwenties",
    },
  ];

  it.each<[Record<string, Json>, string | undefined]>([
    [{ "$.type": "Private", "$.value": 22 }, "ValueInTwenties"],
    [{ "$.type": "Public", "$.value": 22 }, "Public"],
    [{ "$.type": "Private", "$.value": 0 }, "ValueIsZero"],
    [{ "$.type": "Private", "$.value": 42 }, undefined],
  ])("%j goes to %s", (values, next) => {
    expect(selectChoice(choices, scope(values))?.Next).toBe(next);
  });

  it("returns the matching rule itself", () => {
    expect(selectChoice(choices, scope({ "$.type": "Public" }))).toBe(choices[0]);
  });

  it("does not evaluate the rules after the first match", () => {
    const rules: ChoiceRule[] = [
      { Variable: "$.a", IsNull: false, Next: "First" },
      { Variable: "$.missing", IsNull: false, Next: "Second" },
    ];
    expect(selectChoice(rules, scope({ "$.a": 1 }))?.Next).toBe("First");
  });

  it("raises an error met before any match", () => {
    // AWS docs: without `$.type` in the input, this state fails the execution.
    expect(failure(() => selectChoice(choices, scope({ "$.value": 22 }))).error).toBe(
      "States.Runtime",
    );
  });

  it("breaks a Map iteration at the item 3 (localstack test_map_state_break_condition)", () => {
    const rule: ChoiceRule = {
      And: [
        { IsPresent: true, Variable: "$" },
        {
          And: [
            { IsNumeric: true, Variable: "$" },
            { NumericEquals: 3, Variable: "$" },
          ],
        },
      ],
      Next: "Break",
    };
    const items: Json[] = [1, "Hello", {}, 3.3, 3, 4, 5];
    const hits = items.map((item) => selectChoice([rule], scope({ $: item }))?.Next);
    expect(hits).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      "Break",
      undefined,
      undefined,
    ]);
  });
});

describe("StringMatches patterns", () => {
  // Patterns are written as the JSON string values they are: "\\*" in JSON is `\*`.
  it.each<[pattern: string, text: string, expected: boolean]>([
    ["log-*.txt", "log-1.txt", true],
    ["log-*.txt", "log-.txt", true],
    ["log-*.txt", "log-1.txt.bak", false],
    ["log-*.txt", "xlog-1.txt", false],
    ["*", "", true],
    ["*", "anything", true],
    ["**", "x", true],
    ["a*b*c", "abc", true],
    ["a*b*c", "aXbYc", true],
    ["a*b*c", "abcbc", true],
    ["a*b*c", "acb", false],
    ["a*a", "a", false],
    ["*.txt", ".txt", true],
    ["", "", true],
    ["", "a", false],
    ["abc", "abc", true],
    ["abc", "abcd", false],
    ["\\*", "*", true],
    ["\\*", "x", false],
    ["a\\*b", "a*b", true],
    ["a\\*b", "axb", false],
    ["*\\**", "x*y", true],
    ["*\\**", "xy", false],
    ["\\\\", "\\", true],
    ["\\\\*", "\\abc", true],
    ["\\\\*", "abc", false],
    ["a\\b", "a\\b", true], // a backslash before anything else is literal
    ["a\\", "a\\", true],
    ["a?c", "abc", false], // only `*` is special
    ["a?c", "a?c", true],
    [".*", "x", false],
    [".*", ".anything", true],
    ["[a]*", "[a]bc", true],
  ])("%j against %j is %s", (pattern, text, expected) => {
    expect(wildcardMatches(text, pattern)).toBe(expected);
  });

  it("splits a pattern at its unescaped stars", () => {
    expect(wildcardSegments("a*b\\*c\\\\*")).toEqual(["a", "b*c\\", ""]);
  });
});

describe("timestamps", () => {
  it.each([
    "2012-10-09T19:00:55Z",
    "2012-10-09T19:00:55+01:00",
    "2012-10-09T19:00:55-00:00",
    "2012-10-09T19:00:55.5Z",
    "2012-10-09T19:00:55.123456789+05:30",
    "2016-02-29T00:00:00Z",
    "2000-02-29T00:00:00Z",
    "0001-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
  ])("%s is a timestamp", (text) => {
    expect(check("IsTimestamp", text, true)).toBe(true);
  });

  it.each([
    "2012-10-09T19:00:55", // no offset
    "2023-02-24", // date only
    "2023-02-24 12:15:56.832957",
    "2012-10-09t19:00:55Z", // lowercase t
    "2012-10-09T19:00:55z", // lowercase z
    "2012-10-09T19:00:55+0100",
    "2012-10-09T19:00:55+01",
    "2012-10-09T19:00Z",
    "2012-10-09T19:00:55.Z",
    "12-10-09T19:00:55Z",
    "2012-13-09T19:00:55Z",
    "2012-00-09T19:00:55Z",
    "2012-04-31T19:00:55Z",
    "2015-02-29T00:00:00Z",
    "1900-02-29T00:00:00Z",
    "2012-10-09T24:00:00Z",
    "2012-10-09T19:60:00Z",
    "2012-10-09T19:00:60Z",
    "2012-10-09T19:00:55+24:00",
    " 2012-10-09T19:00:55Z",
    "",
  ])("%j is not a timestamp", (text) => {
    expect(check("IsTimestamp", text, true)).toBe(false);
  });

  it("reads the instant, whatever the offset", () => {
    expect(parseTimestamp("1970-01-01T00:00:00Z")).toEqual({ epochSeconds: 0, fraction: "" });
    expect(parseTimestamp("1970-01-01T01:00:00+01:00")).toEqual({ epochSeconds: 0, fraction: "" });
    expect(parseTimestamp("1969-12-31T23:59:59.250Z")).toEqual({
      epochSeconds: -1,
      fraction: "25",
    });
    expect(parseTimestamp("2012-10-09T19:00:55Z")?.epochSeconds).toBe(1_349_809_255);
    expect(parseTimestamp("2000-03-01T00:00:00Z")?.epochSeconds).toBe(951_868_800);
  });

  it("orders fractions digit by digit", () => {
    const at = (text: string) => parseTimestamp(text)!;
    expect(compareInstants(at("2012-10-09T19:00:55.5Z"), at("2012-10-09T19:00:55.50000Z"))).toBe(0);
    expect(compareInstants(at("2012-10-09T19:00:55.09Z"), at("2012-10-09T19:00:55.1Z"))).toBe(-1);
    expect(compareInstants(at("2012-10-09T19:00:56Z"), at("2012-10-09T19:00:55.999999Z"))).toBe(1);
  });
});
