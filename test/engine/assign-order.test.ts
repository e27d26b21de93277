import { describe, expect, it } from "vitest";
import { execute } from "./helpers.js";

/**
 * When a state's `Assign` is evaluated and when its values take effect (issue #36).
 *
 * AWS Developer Guide, "Passing data between states with variables"
 * (https://docs.aws.amazon.com/step-functions/latest/dg/workflow-variables.html):
 * every expression of a state (its Assign, its Output, its paths) is evaluated
 * against the variables as they were when the state was entered; the state's
 * assignments take effect once it is done, so the state's own output never sees
 * them, and the next state does. In a JSONPath state, Assign's `$` is the state's
 * result: for a Pass state its `Result`, else the effective input after InputPath
 * and Parameters ("Pass workflow state": Result "refers to the output of a virtual
 * task"); in a JSONata state `$states.input` is the raw state input.
 */
describe("Assign order in a Pass state (JSONPath)", () => {
  it("Assign reads Result; ResultPath and OutputPath read the variables before the state", async () => {
    const r = await execute(
      {
        StartAt: "Before",
        States: {
          Before: { Type: "Pass", Assign: { x: "old" }, Next: "P" },
          P: {
            Type: "Pass",
            Result: { r: 5 },
            ResultPath: "$.res",
            // `$` in Assign is the Result, `$x` the value before this state.
            Assign: { x: "new", "fromResult.$": "$.r", "previous.$": "$x" },
            // The output path reads a variable: it must see the old value.
            OutputPath: "$x",
            Next: "After",
          },
          After: {
            Type: "Pass",
            Parameters: {
              "input.$": "$",
              "x.$": "$x",
              "fromResult.$": "$fromResult",
              "previous.$": "$previous",
            },
            End: true,
          },
        },
      },
      { input: { a: 1 } },
    );
    expect(r.output).toEqual({ input: "old", x: "new", fromResult: 5, previous: "old" });
  });

  it("without Result, Assign reads the effective input after InputPath and Parameters", async () => {
    const r = await execute(
      {
        StartAt: "P",
        States: {
          P: {
            Type: "Pass",
            InputPath: "$.order",
            Parameters: { "total.$": "States.MathAdd($.a, $.b)" },
            Assign: { "total.$": "$.total" },
            ResultPath: "$.computed",
            Next: "After",
          },
          After: { Type: "Pass", Parameters: { "total.$": "$total", "out.$": "$" }, End: true },
        },
      },
      { input: { order: { a: 2, b: 3 } } },
    );
    expect(r.output).toEqual({
      total: 5,
      out: { order: { a: 2, b: 3 }, computed: { total: 5 } },
    });
  });

  it("an OutputPath naming a variable the state assigns reads its old value", async () => {
    const r = await execute(
      {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Assign: { n: 1 }, Next: "B" },
          B: { Type: "Pass", Assign: { n: 2 }, OutputPath: "$n", End: true },
        },
      },
      { input: {} },
    );
    expect(r.output).toBe(1);
  });

  it("a Task's OutputPath reads the variables before the state too", async () => {
    const r = await execute(
      {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Assign: { v: "before" }, Next: "T" },
          T: {
            Type: "Task",
            Resource: "r",
            Assign: { "v.$": "$.id" },
            OutputPath: "$v",
            Next: "After",
          },
          After: { Type: "Pass", Parameters: { "in.$": "$", "v.$": "$v" }, End: true },
        },
      },
      { tasks: { r: () => ({ id: "after" }) } },
    );
    expect(r.output).toEqual({ in: "before", v: "after" });
  });

  it("a Choice rule's Assign takes effect after the Choice's OutputPath", async () => {
    const r = await execute(
      {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Assign: { size: "unknown" }, Next: "C" },
          C: {
            Type: "Choice",
            Choices: [
              { Variable: "$.v", NumericGreaterThan: 5, Next: "B", Assign: { size: "big" } },
            ],
            Default: "B",
            OutputPath: "$size",
          },
          B: { Type: "Pass", Parameters: { "in.$": "$", "size.$": "$size" }, End: true },
        },
      },
      { input: { v: 9 } },
    );
    expect(r.output).toEqual({ in: "unknown", size: "big" });
  });

  it("a Wait's SecondsPath and OutputPath read the variables before the state", async () => {
    const r = await execute({
      StartAt: "A",
      States: {
        A: { Type: "Pass", Assign: { s: 1 }, Next: "W" },
        W: { Type: "Wait", SecondsPath: "$s", Assign: { s: 99 }, OutputPath: "$s", Next: "B" },
        B: { Type: "Pass", Parameters: { "in.$": "$", "s.$": "$s" }, End: true },
      },
    });
    expect(r.output).toEqual({ in: 1, s: 99 });
    const waited = r.history.find((e) => e.type === "WaitStateExited")!;
    const entered = r.history.find((e) => e.type === "WaitStateEntered")!;
    expect(Date.parse(waited.timestamp) - Date.parse(entered.timestamp)).toBe(1000);
  });
});

describe("Assign order in a Pass state (JSONata)", () => {
  it("Output sees the variables before the state; the next state sees the new ones", async () => {
    const r = await execute(
      {
        QueryLanguage: "JSONata",
        StartAt: "Before",
        States: {
          Before: { Type: "Pass", Assign: { x: "old" }, Next: "P" },
          P: {
            Type: "Pass",
            Assign: { x: "new", previous: "{% $x %}", seen: "{% $states.input.a %}" },
            Output: { x: "{% $x %}", input: "{% $states.input %}" },
            Next: "After",
          },
          After: {
            Type: "Pass",
            Output: {
              in: "{% $states.input %}",
              x: "{% $x %}",
              previous: "{% $previous %}",
              seen: "{% $seen %}",
            },
            End: true,
          },
        },
      },
      { input: { a: 1 } },
    );
    expect(r.output).toEqual({
      in: { x: "old", input: { a: 1 } },
      x: "new",
      previous: "old",
      seen: 1,
    });
  });

  it("a failing Output assigns nothing", async () => {
    const r = await execute({
      QueryLanguage: "JSONata",
      StartAt: "Before",
      States: {
        Before: { Type: "Pass", Assign: { x: "old" }, Next: "P" },
        P: {
          Type: "Pass",
          Assign: { x: "new" },
          Output: "{% $error('boom') %}",
          End: true,
        },
      },
    });
    expect(r.status).toBe("FAILED");
    const exited = r.history.filter((e) => e.type === "PassStateExited");
    expect(exited).toHaveLength(1);
  });
});
