import { describe, expect, it } from "vitest";
import type {
  FailState,
  PassState,
  StateMachineDefinition,
  WaitState,
} from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { at, details, execute, ofType, only, single, types } from "./helpers.js";

// AWS "Processing input and output in Step Functions": InputPath → Parameters →
// (Result) → ResultPath → OutputPath. `null` InputPath/OutputPath give `{}`,
// `null` ResultPath discards the result and keeps the input.
type Row = { name: string; state: Omit<PassState, "Type" | "End">; input: Json; output: Json };

const ROWS: Row[] = [
  { name: "no fields: input passes through", state: {}, input: { a: 1 }, output: { a: 1 } },
  {
    name: "Result replaces the input",
    state: { Result: { r: true } },
    input: { a: 1 },
    output: { r: true },
  },
  { name: "Result may be a scalar", state: { Result: "x" }, input: { a: 1 }, output: "x" },
  {
    name: "Parameters builds the output from the input",
    state: { Parameters: { "b.$": "$.a", c: "lit", nested: { "d.$": "$.a" } } },
    input: { a: 7 },
    output: { b: 7, c: "lit", nested: { d: 7 } },
  },
  {
    name: "Result wins over Parameters",
    state: { Parameters: { "b.$": "$.a" }, Result: "res" },
    input: { a: 7 },
    output: "res",
  },
  {
    name: "InputPath selects the effective input",
    state: { InputPath: "$.in" },
    input: { in: { x: 1 }, other: 2 },
    output: { x: 1 },
  },
  { name: "InputPath null gives {}", state: { InputPath: null }, input: { a: 1 }, output: {} },
  {
    name: "InputPath then Parameters",
    state: { InputPath: "$.in", Parameters: { "v.$": "$.x" } },
    input: { in: { x: 1 } },
    output: { v: 1 },
  },
  {
    name: "ResultPath merges the result into the input",
    state: { Result: 5, ResultPath: "$.r" },
    input: { a: 1 },
    output: { a: 1, r: 5 },
  },
  {
    name: "ResultPath creates missing objects on the way",
    state: { Result: 5, ResultPath: "$.x.y.z" },
    input: { a: 1 },
    output: { a: 1, x: { y: { z: 5 } } },
  },
  {
    name: "ResultPath overwrites an existing field",
    state: { Result: 5, ResultPath: "$.a" },
    input: { a: 1, b: 2 },
    output: { a: 5, b: 2 },
  },
  {
    name: "ResultPath merges into the raw input, not the InputPath selection",
    state: { InputPath: "$.in", Result: "r", ResultPath: "$.res" },
    input: { in: { x: 1 }, keep: true },
    output: { in: { x: 1 }, keep: true, res: "r" },
  },
  {
    name: "ResultPath null keeps the input",
    state: { Result: 5, ResultPath: null },
    input: { a: 1 },
    output: { a: 1 },
  },
  {
    name: "ResultPath $ replaces the input",
    state: { Result: 5, ResultPath: "$" },
    input: { a: 1 },
    output: 5,
  },
  {
    name: "OutputPath selects from the merged output",
    state: { Result: 5, ResultPath: "$.r", OutputPath: "$.r" },
    input: { a: 1 },
    output: 5,
  },
  { name: "OutputPath null gives {}", state: { OutputPath: null }, input: { a: 1 }, output: {} },
];

describe("Pass state: input and output processing", () => {
  it.each(ROWS)("$name", async ({ state, input, output }) => {
    const r = await execute(single({ Type: "Pass", End: true, ...state } as PassState), { input });
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual(output);
  });

  it("does not mutate the execution input when merging a result", async () => {
    const input = { a: { b: 1 } };
    const r = await execute(single({ Type: "Pass", Result: 2, ResultPath: "$.a.c", End: true }), {
      input,
    });
    expect(r.output).toEqual({ a: { b: 1, c: 2 } });
    expect(input).toEqual({ a: { b: 1 } });
  });
});

describe("Pass state: failures", () => {
  // AWS: "States.ResultPathMatchFailure: Step Functions failed to apply a state's
  // ResultPath field to the input the state received."
  it.each<[string, Json, string]>([
    ["a string input", "text", "$.r"],
    ["a number input", 3, "$.r"],
    ["a non-object on the way", { a: 1 }, "$.a.b"],
    ["an array on the way", { a: [1, 2] }, "$.a.b"],
  ])(
    "ResultPath into %s fails with States.ResultPathMatchFailure",
    async (_, input, resultPath) => {
      const r = await execute(
        single({ Type: "Pass", Result: 1, ResultPath: resultPath, End: true }),
        {
          input,
        },
      );
      expect(r.status).toBe("FAILED");
      expect(r.error).toBe("States.ResultPathMatchFailure");
      expect(r.cause).toContain(resultPath);
    },
  );

  it("a missing InputPath fails with States.Runtime naming the path", async () => {
    const r = await execute(single({ Type: "Pass", InputPath: "$.missing", End: true }), {
      input: { a: 1 },
    });
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("States.Runtime");
    expect(r.cause).toContain("$.missing");
    expect(r.cause).toContain("'S'");
  });

  it("a Parameters path that selects nothing fails with States.Runtime", async () => {
    const r = await execute(single({ Type: "Pass", Parameters: { "x.$": "$.nope" }, End: true }), {
      input: { a: 1 },
    });
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("States.Runtime");
  });

  it("a missing OutputPath fails with States.Runtime", async () => {
    const r = await execute(single({ Type: "Pass", OutputPath: "$.nope", End: true }), {
      input: { a: 1 },
    });
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("States.Runtime");
  });
});

describe("Pass state: chaining", () => {
  it("follows Next, feeding each state's output to the next", async () => {
    const r = await execute(
      {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Result: 1, ResultPath: "$.a", Next: "B" },
          B: { Type: "Pass", Parameters: { "sum.$": "States.MathAdd($.a, $.b)" }, Next: "C" },
          C: { Type: "Pass", End: true },
        },
      },
      { input: { b: 41 } },
    );
    expect(r.output).toEqual({ sum: 42 });
  });
});

describe("Choice state", () => {
  const machine: StateMachineDefinition = {
    StartAt: "C",
    States: {
      C: {
        Type: "Choice",
        Choices: [
          { Variable: "$.n", NumericLessThan: 0, Next: "Negative" },
          {
            And: [
              { Variable: "$.n", NumericGreaterThanEquals: 0 },
              { Variable: "$.n", NumericLessThan: 10 },
            ],
            Next: "Small",
          },
          { Not: { Variable: "$.kind", IsPresent: true }, Next: "NoKind" },
          { Variable: "$.kind", StringMatches: "big*", Next: "Big" },
        ],
        Default: "Other",
      },
      Negative: { Type: "Pass", Result: "negative", End: true },
      Small: { Type: "Pass", Result: "small", End: true },
      NoKind: { Type: "Pass", Result: "no kind", End: true },
      Big: { Type: "Pass", Result: "big", End: true },
      Other: { Type: "Pass", Result: "other", End: true },
    },
  };

  it.each<[Json, string]>([
    [{ n: -1 }, "negative"],
    [{ n: 0, kind: "x" }, "small"],
    [{ n: 9.5, kind: "x" }, "small"],
    [{ n: 10 }, "no kind"],
    [{ n: 10, kind: "bigger" }, "big"],
    [{ n: 10, kind: "huge" }, "other"],
  ])("input %j goes to %s (first matching rule wins)", async (input, expected) => {
    const r = await execute(machine, { input });
    expect(r.output).toBe(expected);
  });

  it("passes its input on unchanged and records ChoiceStateEntered/Exited", async () => {
    const r = await execute(
      {
        StartAt: "C",
        States: {
          C: { Type: "Choice", Choices: [{ Variable: "$.a", BooleanEquals: true, Next: "E" }] },
          E: { Type: "Succeed" },
        },
      },
      { input: { a: true, b: [1] } },
    );
    expect(r.output).toEqual({ a: true, b: [1] });
    expect(types(r.history)).toEqual([
      "ExecutionStarted",
      "ChoiceStateEntered",
      "ChoiceStateExited",
      "SucceedStateEntered",
      "SucceedStateExited",
      "ExecutionSucceeded",
    ]);
  });

  it("applies InputPath and OutputPath", async () => {
    const r = await execute(
      {
        StartAt: "C",
        States: {
          C: {
            Type: "Choice",
            InputPath: "$.in",
            OutputPath: "$.v",
            Choices: [{ Variable: "$.v", NumericEquals: 1, Next: "E" }],
          },
          E: { Type: "Succeed" },
        },
      },
      { input: { in: { v: 1 } } },
    );
    expect(r.output).toBe(1);
  });

  // AWS "Error names": States.NoChoiceMatched "a Choice state failed to find a match
  // for the condition field extracted from its input" (and there is no Default).
  it("fails with States.NoChoiceMatched when nothing matches and there is no Default", async () => {
    const r = await execute(
      {
        StartAt: "C",
        States: {
          C: { Type: "Choice", Choices: [{ Variable: "$.n", NumericEquals: 1, Next: "E" }] },
          E: { Type: "Succeed" },
        },
      },
      { input: { n: 2 } },
    );
    expect(r).toMatchObject({ status: "FAILED", error: "States.NoChoiceMatched" });
    expect(ofType(r.history, "ChoiceStateExited")).toEqual([]);
  });
});

describe("Wait state", () => {
  const waitThen = (wait: Omit<WaitState, "Type" | "Next">): StateMachineDefinition => ({
    StartAt: "W",
    States: {
      W: { Type: "Wait", Next: "Done", ...wait } as WaitState,
      Done: { Type: "Pass", End: true },
    },
  });

  /** Milliseconds (virtual) the Wait state took, from its history events. */
  function waited(history: Parameters<typeof ofType>[0]): number {
    const entered = only(ofType(history, "WaitStateEntered"));
    const exited = only(ofType(history, "WaitStateExited"));
    return at(exited) - at(entered);
  }

  it.each<[string, Omit<WaitState, "Type" | "Next">, Json, number]>([
    ["Seconds", { Seconds: 30 }, {}, 30_000],
    ["Seconds 0", { Seconds: 0 }, {}, 0],
    ["SecondsPath", { SecondsPath: "$.s" }, { s: 90 }, 90_000],
    ["Timestamp", { Timestamp: "2024-01-01T01:00:00Z" }, {}, 3_600_000],
    ["Timestamp with an offset", { Timestamp: "2024-01-01T02:00:00+01:00" }, {}, 3_600_000],
    ["Timestamp with a fraction", { Timestamp: "2024-01-01T00:00:01.5Z" }, {}, 1_500],
    ["TimestampPath", { TimestampPath: "$.t" }, { t: "2024-01-02T00:00:00Z" }, 86_400_000],
    ["a Timestamp in the past", { Timestamp: "2020-01-01T00:00:00Z" }, {}, 0],
  ])("%s: the virtual clock advances by the wait", async (_, wait, input, ms) => {
    const r = await execute(waitThen(wait), { input });
    expect(r.status).toBe("SUCCEEDED");
    expect(waited(r.history)).toBe(ms);
    expect(r.output).toEqual(input);
  });

  it("waits a year without costing real time", async () => {
    const r = await execute(waitThen({ Seconds: 365 * 24 * 3600 }));
    expect(waited(r.history)).toBe(365 * 24 * 3600 * 1000);
    expect(at(only(ofType(r.history, "ExecutionSucceeded")))).toBe(365 * 24 * 3600 * 1000);
  });

  it("consecutive waits add up", async () => {
    const r = await execute({
      StartAt: "A",
      States: {
        A: { Type: "Wait", Seconds: 5, Next: "B" },
        B: { Type: "Wait", Seconds: 7, End: true },
      },
    });
    expect(ofType(r.history, "WaitStateExited").map(at)).toEqual([5_000, 12_000]);
  });

  it.each<[string, Omit<WaitState, "Type" | "Next">, Json]>([
    ["SecondsPath to a missing field", { SecondsPath: "$.s" }, {}],
    ["SecondsPath to a string", { SecondsPath: "$.s" }, { s: "10" }],
    ["SecondsPath to a negative number", { SecondsPath: "$.s" }, { s: -1 }],
    ["TimestampPath to a non-timestamp", { TimestampPath: "$.t" }, { t: "tomorrow" }],
  ])("%s fails with States.Runtime", async (_, wait, input) => {
    const r = await execute(waitThen(wait), { input });
    expect(r).toMatchObject({ status: "FAILED", error: "States.Runtime" });
  });

  it("applies InputPath and OutputPath", async () => {
    const r = await execute(waitThen({ Seconds: 1, InputPath: "$.a", OutputPath: "$.b" }), {
      input: { a: { b: 2 } },
    });
    expect(r.output).toBe(2);
  });
});

describe("Succeed state", () => {
  it("ends the execution with its (filtered) input", async () => {
    const r = await execute(single({ Type: "Succeed", InputPath: "$.a", OutputPath: "$.b" }), {
      input: { a: { b: [1, 2] } },
    });
    expect(r).toMatchObject({ status: "SUCCEEDED", output: [1, 2] });
    expect(details(only(ofType(r.history, "ExecutionSucceeded"))).output).toBe("[1,2]");
  });
});

describe("Fail state", () => {
  const failWith = (fail: Omit<FailState, "Type">, input: Json = {}) =>
    execute(single({ Type: "Fail", ...fail }), { input });

  it("fails with Error and Cause", async () => {
    const r = await failWith({ Error: "MyError", Cause: "my cause" });
    expect(r).toMatchObject({ status: "FAILED", error: "MyError", cause: "my cause" });
    const failed = only(ofType(r.history, "ExecutionFailed"));
    expect(details(failed)).toEqual({ error: "MyError", cause: "my cause" });
    // AWS writes no FailStateExited: the execution ends in the state.
    expect(types(r.history)).toEqual(["ExecutionStarted", "FailStateEntered", "ExecutionFailed"]);
  });

  it("reads ErrorPath and CausePath from the input", async () => {
    const r = await failWith({ ErrorPath: "$.e", CausePath: "$.c" }, { e: "Dyn", c: "dynamic" });
    expect(r).toMatchObject({ error: "Dyn", cause: "dynamic" });
  });

  it("ErrorPath and CausePath may be intrinsic functions", async () => {
    const r = await failWith(
      { ErrorPath: "States.Format('E{}', $.n)", CausePath: "States.Format('n is {}', $.n)" },
      { n: 3 },
    );
    expect(r).toMatchObject({ error: "E3", cause: "n is 3" });
  });

  it("a Fail state without Error reports no error name at all", async () => {
    const r = await failWith({ Cause: "only a cause" });
    expect(r.status).toBe("FAILED");
    expect(r.error).toBeUndefined();
    expect(r.cause).toBe("only a cause");
  });

  it("a bare Fail state reports neither error nor cause", async () => {
    const r = await failWith({});
    expect(r.status).toBe("FAILED");
    expect(r.error).toBeUndefined();
    expect(r.cause).toBeUndefined();
  });

  it("an ErrorPath to a non-string fails with States.Runtime", async () => {
    const r = await failWith({ ErrorPath: "$.e" }, { e: 42 });
    expect(r).toMatchObject({ status: "FAILED", error: "States.Runtime" });
  });
});
