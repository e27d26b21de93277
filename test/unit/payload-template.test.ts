import { describe, expect, it } from "vitest";
import { isStatesError } from "../../engine/core/errors.js";
import type { Json } from "../../engine/core/json.js";
import { seededRandom } from "../../engine/core/random.js";
import { evaluatePayloadTemplate } from "../../engine/io/payload-template.js";
import type { PathScope } from "../../engine/jsonpath/index.js";

const scope: PathScope = {
  input: { flagged: 7, vals: [0, 10, 20, 30, 40, 50], who: { name: "Ann" }, nil: null },
  context: {
    Execution: { Id: "exec-1" },
    Map: { Item: { Index: 1, Value: "v" } },
    Task: { Token: "tok" },
  },
  variables: { greeting: "hi", limits: { max: 3 } },
};

function evaluate(template: Json, field = "Parameters"): Json {
  return evaluatePayloadTemplate(template, scope, seededRandom("template"), field);
}

function failure(template: Json): [string, string] {
  try {
    evaluate(template);
  } catch (error) {
    if (isStatesError(error)) return [error.error, error.cause];
    throw error;
  }
  throw new Error("did not fail");
}

describe("evaluatePayloadTemplate", () => {
  it("evaluates the ASL spec's example", () => {
    expect(
      evaluate({ flagged: true, parts: { "first.$": "$.vals[0]", "last3.$": "$.vals[3:]" } }),
    ).toStrictEqual({ flagged: true, parts: { first: 0, last3: [30, 40, 50] } });
  });

  it.each<[string, Json, Json]>([
    ["a path into the input", { "x.$": "$.who.name" }, { x: "Ann" }],
    ["the whole input", { "all.$": "$" }, { all: scope.input }],
    ["a null value", { "n.$": "$.nil" }, { n: null }],
    [
      "the context object",
      { "id.$": "$$.Execution.Id", "token.$": "$$.Task.Token" },
      { id: "exec-1", token: "tok" },
    ],
    ["the whole context object", { "ctx.$": "$$" }, { ctx: scope.context }],
    ["a variable", { "g.$": "$greeting", "m.$": "$limits.max" }, { g: "hi", m: 3 }],
    [
      "an intrinsic call",
      { "f.$": "States.Format('{} {}', $greeting, $.who.name)" },
      { f: "hi Ann" },
    ],
    ["a filter", { "big.$": "$.vals[?(@ > 30)]" }, { big: [40, 50] }],
    [
      "literals of every kind, unchanged",
      {
        s: "$.not.a.path",
        n: 1,
        b: false,
        z: null,
        a: [1, "$"],
        o: { deep: "States.Format('x')" },
      },
      {
        s: "$.not.a.path",
        n: 1,
        b: false,
        z: null,
        a: [1, "$"],
        o: { deep: "States.Format('x')" },
      },
    ],
    [
      "objects inside arrays",
      { list: [{ "v.$": "$.flagged" }, 2, [{ "w.$": "$greeting" }]] },
      { list: [{ v: 7 }, 2, [{ w: "hi" }]] },
    ],
    ["a top-level array", [{ "v.$": "$.flagged" }], [{ v: 7 }]],
    ["a top-level scalar", "text", "text"],
    ["an empty object", {}, {}],
    ["a key that is just '.$'", { ".$": "$.flagged" }, { "": 7 }],
  ])("%s", (_name, template, expected) => {
    expect(evaluate(template)).toStrictEqual(expected);
  });

  it("keeps the key order of the template", () => {
    expect(Object.keys(evaluate({ b: 1, "a.$": "$.flagged", c: 2 }) as object)).toStrictEqual([
      "b",
      "a",
      "c",
    ]);
  });

  it("does not mutate the template or the input", () => {
    const template = { "x.$": "$.who", y: { z: 1 } };
    const before = JSON.stringify([template, scope.input]);
    evaluate(template);
    expect(JSON.stringify([template, scope.input])).toBe(before);
  });

  it("stores a '__proto__' key as data", () => {
    const result = evaluate(JSON.parse('{"__proto__.$": "$.who"}') as Json) as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toStrictEqual(["__proto__"]);
  });

  it("a path that selects nothing is States.Runtime with AWS's wording", () => {
    expect(failure({ "missing.$": "$.nope.deep" })).toStrictEqual([
      "States.Runtime",
      `The JSONPath '$.nope.deep' specified for the field 'missing.$' could not be found in the input '${JSON.stringify(scope.input)}'`,
    ]);
    expect(failure({ nested: { "value.$": "$$.Execution.Input.no_such_jsonpath" } })).toStrictEqual(
      [
        "States.Runtime",
        `The JSONPath '$$.Execution.Input.no_such_jsonpath' specified for the field 'value.$' could not be found in the input '${JSON.stringify(scope.context)}'`,
      ],
    );
    expect(failure({ "v.$": "$undefinedVariable" })[0]).toBe("States.Runtime");
  });

  it("a bad intrinsic is States.IntrinsicFailure; a missing path inside it is States.Runtime", () => {
    expect(failure({ "x.$": "States.ArrayGetItem($.vals, 10)" })[0]).toBe(
      "States.IntrinsicFailure",
    );
    expect(failure({ "x.$": "States.Format('{}', $.nope)" })).toStrictEqual([
      "States.Runtime",
      `The JSONPath '$.nope' specified for the field 'x.$' could not be found in the input '${JSON.stringify(scope.input)}'`,
    ]);
  });

  it("a '.$' value that is neither a path nor a call is refused", () => {
    expect(failure({ "x.$": "plain" })).toStrictEqual([
      "States.Runtime",
      "The value for the field 'x.$' in Parameters must be a valid JSONPath or a valid intrinsic function call",
    ]);
    expect(failure({ "x.$": 1 })[0]).toBe("States.Runtime");
    expect(failure({ "x.$": "$.a b" })[0]).toBe("States.Runtime");
  });

  it("draws UUIDs from the given random source", () => {
    const a = evaluatePayloadTemplate(
      { "id.$": "States.UUID()" },
      scope,
      seededRandom("same"),
      "Parameters",
    );
    const b = evaluatePayloadTemplate(
      { "id.$": "States.UUID()" },
      scope,
      seededRandom("same"),
      "Parameters",
    );
    expect(a).toStrictEqual(b);
  });
});
