import { describe, expect, it } from "vitest";
import {
  evaluateChoiceRule,
  selectChoice,
  type PathResolver,
} from "../../engine/choice/evaluate.js";
import type { ChoiceRule } from "../../engine/core/definition.js";
import { isStatesError } from "../../engine/core/errors.js";
import type { Json, JsonObject } from "../../engine/core/json.js";
import { DeferredRandom, seededRandom } from "../../engine/core/random.js";
import { Deque } from "../../engine/drivers/deque.js";
import { evaluatePayloadTemplate } from "../../engine/io/payload-template.js";
import {
  evaluatePath,
  parsePath,
  pathValue,
  readPath,
  type PathScope,
} from "../../engine/jsonpath/index.js";
import { branchScope, compileProgram, processorScope } from "../../engine/program.js";

// The interpreter prepares templates, Choice rules and paths once and reuses them on
// every transition. These tests pin that the prepared forms answer exactly as the
// plain walk does, including errors, and that reusing them changes nothing.

function failure(f: () => unknown): [string, string] {
  try {
    f();
  } catch (error) {
    if (isStatesError(error)) return [error.error, error.cause];
    throw error;
  }
  throw new Error("did not fail");
}

const proto = JSON.parse('{"__proto__": {"x": 1}}') as JsonObject;
const scope: PathScope = {
  input: {
    a: { b: { c: 1 } },
    list: [10, 20, 30],
    nested: [{ v: 1 }, { v: 2 }],
    nil: null,
    empty: {},
    "a b": 2,
    proto,
    text: "hello",
  },
  context: { Execution: { Id: "e" }, Map: { Item: { Index: 3 } } },
  variables: { v: { deep: [1, 2] }, zero: 0 },
};

describe("pathValue (the allocation-free read) agrees with evaluatePath", () => {
  it.each([
    "$",
    "$.a.b.c",
    "$.a.b.missing",
    "$.a.missing.c",
    "$.list[0]",
    "$.list[-1]",
    "$.list[-4]",
    "$.list[3]",
    "$.list.length()",
    "$.text.length()",
    "$.nested[1].v",
    "$.nested[*].v",
    "$.nested[?(@.v > 1)]",
    "$..v",
    "$.list[0:2]",
    "$.a['b','x']",
    "$['a b']",
    "$.nil",
    "$.nil.x",
    "$.empty",
    "$.proto.__proto__",
    "$.proto.__proto__.x",
    "$.toString",
    "$.list.toString",
    "$$.Execution.Id",
    "$$.Map.Item.Index",
    "$v.deep[1]",
    "$zero",
    "$unknown",
    "$unknown.x",
  ])("%s", (text) => {
    const expr = parsePath(text);
    const general = evaluatePath(expr, scope);
    const fast = pathValue(expr, scope);
    expect(fast === undefined ? { found: false } : { found: true, value: fast }).toStrictEqual(
      general,
    );
  });
});

describe("compiled payload templates", () => {
  const template: Json = {
    "sum.$": "States.MathAdd($.list[0], 1)",
    "b.$": "$.a.b",
    literal: { deep: ["$.not.a.path", 1] },
    list: [{ "c.$": "$.a.b.c" }, 2],
    "ctx.$": "$$.Map.Item.Index",
    "var.$": "$v.deep",
  };

  it("gives the same fresh output on every evaluation", () => {
    const random = seededRandom("t");
    const first = evaluatePayloadTemplate(template, scope, random, "Parameters");
    const second = evaluatePayloadTemplate(template, scope, random, "Parameters");
    const expected = {
      sum: 11,
      b: { c: 1 },
      literal: { deep: ["$.not.a.path", 1] },
      list: [{ c: 1 }, 2],
      ctx: 3,
      var: [1, 2],
    };
    expect(first).toStrictEqual(expected);
    expect(second).toStrictEqual(expected);
    // Literal parts are copied, never shared with the definition or between outputs.
    const out = first as { literal: JsonObject; list: Json[] };
    expect(out.literal).not.toBe((template as { literal: Json }).literal);
    expect(out.literal).not.toBe((second as { literal: JsonObject }).literal);
    expect(out.list).not.toBe((second as { list: Json[] }).list);
  });

  it("reads each evaluation's own scope", () => {
    const t: Json = { "x.$": "$.x" };
    const random = seededRandom("t");
    expect(evaluatePayloadTemplate(t, { ...scope, input: { x: 1 } }, random, "P")).toEqual({
      x: 1,
    });
    expect(evaluatePayloadTemplate(t, { ...scope, input: { x: 2 } }, random, "P")).toEqual({
      x: 2,
    });
  });

  it("raises a template's problems at every evaluation, naming that evaluation's field", () => {
    const random = seededRandom("t");
    const bad: Json = { "n.$": 5 };
    for (const field of ["Parameters", "ItemSelector", "Parameters"]) {
      expect(failure(() => evaluatePayloadTemplate(bad, scope, random, field))).toEqual([
        "States.Runtime",
        `The value for the field 'n.$' in ${field} must be a valid JSONPath or a valid intrinsic function call`,
      ]);
    }
    const unknown: Json = { "u.$": "States.NoSuchThing(1)" };
    const syntax: Json = { "p.$": "$.a[" };
    for (let i = 0; i < 2; i++) {
      expect(failure(() => evaluatePayloadTemplate(unknown, scope, random, "P"))).toEqual([
        "States.IntrinsicFailure",
        "Unknown intrinsic function 'States.NoSuchThing'.",
      ]);
      expect(failure(() => evaluatePayloadTemplate(syntax, scope, random, "P"))[0]).toBe(
        "States.Runtime",
      );
    }
  });

  it("a missing path fails with the document it looked in, each time", () => {
    const t: Json = { "x.$": "$.nope" };
    const random = seededRandom("t");
    for (const input of [{ a: 1 }, { b: 2 }] as Json[]) {
      expect(
        failure(() => evaluatePayloadTemplate(t, { ...scope, input }, random, "Parameters")),
      ).toEqual([
        "States.Runtime",
        `The JSONPath '$.nope' specified for the field 'x.$' could not be found in the input '${JSON.stringify(input)}'`,
      ]);
    }
  });

  it("keeps the uncompiled walk's key order and __proto__ handling", () => {
    const t = JSON.parse('{"z": 1, "a.$": "$.a.b.c", "__proto__.$": "$.list", "m": 2}') as Json;
    const out = evaluatePayloadTemplate(t, scope, seededRandom("t"), "P") as JsonObject;
    expect(Object.keys(out)).toEqual(["z", "a", "__proto__", "m"]);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(out["__proto__"]).toEqual([10, 20, 30]);
  });
});

describe("compiled Choice rules", () => {
  const values: Record<string, Json> = { "$.n": 3, "$.s": "b", "$.t": "2024-01-01T00:00:00Z" };
  const resolve: PathResolver = (path) =>
    Object.hasOwn(values, path) ? { found: true, value: values[path]! } : { found: false };

  it("answer the same on every evaluation", () => {
    const rule: ChoiceRule = {
      And: [
        { Variable: "$.n", NumericGreaterThan: 2 },
        { Not: { Variable: "$.s", StringEquals: "a" } },
        {
          Or: [
            { Variable: "$.x", IsPresent: true },
            { Variable: "$.t", IsTimestamp: true },
          ],
        },
      ],
      Next: "Yes",
    };
    for (let i = 0; i < 3; i++) expect(evaluateChoiceRule(rule, resolve)).toBe(true);
    values["$.n"] = 1;
    expect(evaluateChoiceRule(rule, resolve)).toBe(false);
    values["$.n"] = 3;
  });

  it("a malformed rule fails only when reached, and every time it is", () => {
    const malformed: ChoiceRule = { Variable: "$.n", Next: "X" };
    const choices: ChoiceRule[] = [{ Variable: "$.n", NumericEquals: 3, Next: "First" }, malformed];
    expect(selectChoice(choices, resolve)?.Next).toBe("First");
    const reached = [malformed];
    for (let i = 0; i < 2; i++) {
      expect(failure(() => selectChoice(reached, resolve))).toEqual([
        "States.Runtime",
        "Invalid Choice rule: a comparison needs exactly one comparison operator.",
      ]);
    }
    const twoOperators: ChoiceRule = { Variable: "$.n", NumericEquals: 3, IsPresent: true };
    expect(failure(() => evaluateChoiceRule(twoOperators, resolve))[1]).toBe(
      "Invalid Choice rule: a comparison needs exactly one comparison operator.",
    );
    const badAnd: ChoiceRule = { And: [] };
    expect(failure(() => evaluateChoiceRule(badAnd, resolve))[1]).toBe(
      "Invalid Choice rule: 'And' must be a non-empty array of Choice rules.",
    );
  });

  it("And stops at the first false rule, so an IsPresent guard protects a comparison", () => {
    const comparison: ChoiceRule = { Variable: "$.missing", NumericEquals: 1 };
    const guarded: ChoiceRule = {
      And: [{ Variable: "$.missing", IsPresent: true }, comparison],
    };
    expect(evaluateChoiceRule(guarded, resolve)).toBe(false);
    expect(failure(() => evaluateChoiceRule(comparison, resolve))).toEqual([
      "States.Runtime",
      "Invalid path '$.missing': The choice state's condition path references an invalid value.",
    ]);
  });
});

describe("DeferredRandom", () => {
  it("draws exactly what the seeded stream draws, and counts as it does", () => {
    const deferred = new DeferredRandom("seed", "run", 5);
    expect(deferred.counter).toBe(5);
    const plain = seededRandom("seed/run", 5);
    expect([deferred.next(), deferred.uuid(), deferred.next()]).toEqual([
      plain.next(),
      plain.uuid(),
      plain.next(),
    ]);
    expect(deferred.counter).toBe(plain.counter);
  });
});

describe("Deque (the in-memory driver's event queue)", () => {
  it("is FIFO across growth and wrap-around, with unshift at the front", () => {
    const q = new Deque<number>();
    const model: number[] = [];
    let next = 0;
    // A deterministic mix of operations that wraps the ring and grows it several times.
    for (let i = 0; i < 2000; i++) {
      const op = (i * 7919) % 10;
      if (op < 5) {
        q.push(next);
        model.push(next++);
      } else if (op < 7) {
        q.unshift(next);
        model.unshift(next++);
      } else {
        expect(q.shift()).toBe(model.shift());
      }
      expect(q.length).toBe(model.length);
    }
    while (model.length > 0) expect(q.shift()).toBe(model.shift());
    expect(q.shift()).toBeUndefined();
    expect(q.length).toBe(0);
  });
});

describe("compileProgram child scopes", () => {
  it("holds the pointers branchScope/processorScope build, and the Map's name", () => {
    const leaf = { StartAt: "L", States: { L: { Type: "Pass" as const, End: true } } };
    const program = compileProgram({
      StartAt: "a/b~c",
      States: {
        "a/b~c": { Type: "Map", ItemProcessor: leaf, Next: "P" },
        P: { Type: "Parallel", Branches: [leaf, leaf], Next: "Old" },
        Old: { Type: "Map", Iterator: leaf, End: true },
      },
    });
    const top = program.scopes.get("")!;
    expect(top.children.get("a/b~c")).toEqual({
      scopes: [processorScope("", "a/b~c", false)],
      iterations: true,
    });
    expect(top.children.get("P")).toEqual({
      scopes: [branchScope("", "P", 0), branchScope("", "P", 1)],
      iterations: false,
    });
    expect(top.children.get("Old")?.scopes).toEqual([processorScope("", "Old", true)]);
    expect(program.scopes.get(processorScope("", "a/b~c", false))?.owner).toBe("a/b~c");
    expect(program.scopes.get(branchScope("", "P", 0))?.owner).toBeUndefined();
    for (const { scopes } of top.children.values())
      for (const pointer of scopes) expect(program.scopes.has(pointer)).toBe(true);
  });
});

describe("readPath still parses once and answers like evaluatePath", () => {
  it("for every root", () => {
    for (const text of ["$.a.b", "$$.Execution", "$v.deep", "$.nested[*].v"])
      expect(readPath(text, scope)).toStrictEqual(evaluatePath(parsePath(text), scope));
  });
});
