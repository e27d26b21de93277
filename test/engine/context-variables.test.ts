import { describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import type { TaskInvocation } from "../../engine/drivers/memory.js";
import { execute, single } from "./helpers.js";

// AWS "Accessing execution data from the Context object in Step Functions".
describe("context object ($$)", () => {
  it("exposes the execution, the state machine and the current state", async () => {
    const r = await execute(
      {
        StartAt: "Sleep",
        States: {
          Sleep: { Type: "Wait", Seconds: 3, Next: "Read" },
          Read: {
            Type: "Pass",
            Parameters: {
              "id.$": "$$.Execution.Id",
              "name.$": "$$.Execution.Name",
              "input.$": "$$.Execution.Input",
              "start.$": "$$.Execution.StartTime",
              "state.$": "$$.State.Name",
              "entered.$": "$$.State.EnteredTime",
              "retries.$": "$$.State.RetryCount",
              "machine.$": "$$.StateMachine.Name",
              "machineId.$": "$$.StateMachine.Id",
            },
            End: true,
          },
        },
      },
      { input: { order: 1 } },
    );
    expect(r.output).toEqual({
      id: "arn:aws:states:local:000000000000:execution:machine:exec",
      name: "exec",
      input: { order: 1 },
      start: "2024-01-01T00:00:00.000Z",
      state: "Read",
      entered: "2024-01-01T00:00:03.000Z",
      retries: 0,
      machine: "machine",
      machineId: "arn:aws:states:local:000000000000:stateMachine:machine",
    });
  });

  it("$$.Execution.Input is the execution's input, whatever the states did to theirs", async () => {
    const r = await execute(
      {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Result: { replaced: true }, Next: "B" },
          B: {
            Type: "Pass",
            Parameters: { "original.$": "$$.Execution.Input", "now.$": "$" },
            End: true,
          },
        },
      },
      { input: { first: 1 } },
    );
    expect(r.output).toEqual({ original: { first: 1 }, now: { replaced: true } });
  });

  it("$$.State.RetryCount counts the retries; $$.State.EnteredTime stays the entry time", async () => {
    const seen: Json[] = [];
    const r = await execute(
      single({
        Type: "Task",
        Resource: "work",
        Parameters: { "retry.$": "$$.State.RetryCount", "entered.$": "$$.State.EnteredTime" },
        Retry: [{ ErrorEquals: ["Again"], IntervalSeconds: 10, BackoffRate: 1 }],
        End: true,
      }),
      {
        tasks: {
          work: (input) => {
            seen.push(input);
            if (seen.length < 3) throw { error: "Again" };
            return "done";
          },
        },
      },
    );
    expect(r.output).toBe("done");
    expect(seen).toEqual(
      [0, 1, 2].map((retry) => ({ retry, entered: "2024-01-01T00:00:00.000Z" })),
    );
  });

  it("inside a Map iteration $$.State.Name is the inner state's name", async () => {
    const r = await execute(
      single({
        Type: "Map",
        ItemProcessor: {
          StartAt: "Inner",
          States: {
            Inner: {
              Type: "Pass",
              Parameters: { "state.$": "$$.State.Name", "exec.$": "$$.Execution.Name" },
              End: true,
            },
          },
        },
        End: true,
      }),
      { input: [1] },
    );
    expect(r.output).toEqual([{ state: "Inner", exec: "exec" }]);
  });

  it("$$.Task.Token is the token of a .waitForTaskToken task, also given to its handler", async () => {
    const invocations: TaskInvocation[] = [];
    const r = await execute(
      single({
        Type: "Task",
        Resource: "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
        Parameters: { "token.$": "$$.Task.Token", "body.$": "$.body" },
        End: true,
      }),
      {
        input: { body: "hello" },
        nonce: () => "TOKEN-1",
        tasks: {
          "arn:aws:states:::sqs:sendMessage": (input, invocation) => {
            invocations.push(invocation);
            return { echoed: input };
          },
        },
      },
    );
    expect(r.output).toEqual({ echoed: { token: "TOKEN-1", body: "hello" } });
    expect(invocations.map((i) => i.taskToken)).toEqual(["TOKEN-1"]);
  });

  it("each attempt of a .waitForTaskToken task gets a fresh token", async () => {
    const tokens: Json[] = [];
    let n = 0;
    await execute(
      single({
        Type: "Task",
        Resource: "cb.waitForTaskToken",
        Parameters: { "token.$": "$$.Task.Token" },
        Retry: [{ ErrorEquals: ["States.ALL"], IntervalSeconds: 1 }],
        End: true,
      }),
      {
        nonce: () => `tok-${n++}`,
        tasks: {
          cb: (input) => {
            tokens.push((input as { token: Json }).token);
            if (tokens.length === 1) throw { error: "Retry.Me" };
            return null;
          },
        },
      },
    );
    expect(tokens).toHaveLength(2);
    expect(tokens[0]).not.toEqual(tokens[1]);
  });
});

// AWS "Passing data between states with variables": Assign stores variables that
// later states read as `$name`; all values of one Assign see the variables as they
// were before the state; inner Map/Parallel scopes read the outer variables.
describe("variables (Assign)", () => {
  it("a variable assigned in one state is visible in later states", async () => {
    const r = await execute(
      {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Assign: { greeting: "hello", "copied.$": "$.x" }, Next: "B" },
          B: { Type: "Pass", Result: "ignored", Next: "C" },
          C: { Type: "Pass", Parameters: { "g.$": "$greeting", "c.$": "$copied" }, End: true },
        },
      },
      { input: { x: [1, 2] } },
    );
    expect(r.output).toEqual({ g: "hello", c: [1, 2] });
  });

  it("every value in one Assign sees the variables as they were before the state", async () => {
    const r = await execute({
      StartAt: "A",
      States: {
        A: { Type: "Pass", Assign: { n: 1 }, Next: "B" },
        B: { Type: "Pass", Assign: { n: 2, "previous.$": "$n" }, Next: "C" },
        C: { Type: "Pass", Parameters: { "n.$": "$n", "previous.$": "$previous" }, End: true },
      },
    });
    expect(r.output).toEqual({ n: 2, previous: 1 });
  });

  it("paths into variables select inside them", async () => {
    const r = await execute({
      StartAt: "A",
      States: {
        A: { Type: "Pass", Assign: { cfg: { limits: [10, 20] } }, Next: "B" },
        B: { Type: "Pass", Parameters: { "second.$": "$cfg.limits[1]" }, End: true },
      },
    });
    expect(r.output).toEqual({ second: 20 });
  });

  it("a Task's Assign reads the task result", async () => {
    const r = await execute(
      {
        StartAt: "T",
        States: {
          T: {
            Type: "Task",
            Resource: "r",
            Assign: { "id.$": "$.id" },
            ResultPath: null,
            Next: "B",
          },
          B: { Type: "Pass", Parameters: { "id.$": "$id", "input.$": "$" }, End: true },
        },
      },
      { input: { keep: true }, tasks: { r: () => ({ id: "abc" }) } },
    );
    expect(r.output).toEqual({ id: "abc", input: { keep: true } });
  });

  it("a Choice rule's Assign applies when that rule matches", async () => {
    const r = await execute(
      {
        StartAt: "C",
        States: {
          C: {
            Type: "Choice",
            Choices: [
              { Variable: "$.v", NumericGreaterThan: 5, Next: "Out", Assign: { size: "big" } },
            ],
            Default: "Out",
            Assign: { size: "small" },
          },
          Out: { Type: "Pass", Parameters: { "size.$": "$size" }, End: true },
        },
      },
      { input: { v: 9 } },
    );
    expect(r.output).toEqual({ size: "big" });
  });

  it("a catcher's Assign reads the error output", async () => {
    const r = await execute(
      {
        StartAt: "T",
        States: {
          T: {
            Type: "Task",
            Resource: "r",
            Catch: [{ ErrorEquals: ["States.ALL"], Assign: { "why.$": "$.Cause" }, Next: "H" }],
            End: true,
          },
          H: { Type: "Pass", Parameters: { "why.$": "$why" }, End: true },
        },
      },
      { mocks: { T: [{ Throw: { Error: "E", Cause: "because" } }] } },
    );
    expect(r.output).toEqual({ why: "because" });
  });

  // The Developer Guide lists Wait among the states that support Assign
  // ("Pass, Task, Map, Parallel, Choice, Wait").
  it("a Wait state's Assign is applied", async () => {
    const r = await execute({
      StartAt: "W",
      States: {
        W: { Type: "Wait", Seconds: 1, Assign: { waited: true }, Next: "P" },
        P: { Type: "Pass", Parameters: { "waited.$": "$waited" }, End: true },
      },
    });
    expect(r).toMatchObject({ status: "SUCCEEDED", output: { waited: true } });
  });

  it("Map iterations read the outer variables", async () => {
    const r = await execute(
      {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Assign: { factor: 10 }, Next: "M" },
          M: {
            Type: "Map",
            ItemProcessor: {
              StartAt: "I",
              States: {
                I: {
                  Type: "Pass",
                  Parameters: { "item.$": "$", "factor.$": "$factor" },
                  End: true,
                },
              },
            },
            End: true,
          },
        },
      },
      { input: [1, 2] },
    );
    expect(r.output).toEqual([
      { item: 1, factor: 10 },
      { item: 2, factor: 10 },
    ]);
  });

  it("Parallel branches, nested two deep, read the outer variables", async () => {
    const r = await execute({
      StartAt: "A",
      States: {
        A: { Type: "Pass", Assign: { top: "T" }, Next: "P" },
        P: {
          Type: "Parallel",
          Branches: [
            {
              StartAt: "B",
              States: {
                B: { Type: "Pass", Assign: { mid: "M" }, Next: "Q" },
                Q: {
                  Type: "Parallel",
                  Branches: [
                    {
                      StartAt: "Leaf",
                      States: {
                        Leaf: {
                          Type: "Pass",
                          Parameters: { "top.$": "$top", "mid.$": "$mid" },
                          End: true,
                        },
                      },
                    },
                  ],
                  End: true,
                },
              },
            },
          ],
          End: true,
        },
      },
    });
    expect(r.output).toEqual([[{ top: "T", mid: "M" }]]);
  });

  it("a variable assigned inside an iteration stays inside it", async () => {
    const r = await execute(
      {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Assign: { x: "outer" }, Next: "M" },
          M: {
            Type: "Map",
            ItemProcessor: {
              StartAt: "Set",
              States: {
                Set: { Type: "Pass", Assign: { "own.$": "$" }, Next: "Get" },
                Get: { Type: "Pass", Parameters: { "own.$": "$own" }, End: true },
              },
            },
            Next: "After",
          },
          After: { Type: "Pass", Parameters: { "x.$": "$x", "r.$": "$" }, End: true },
        },
      },
      { input: ["a", "b"] },
    );
    // Each iteration sees only its own assignment.
    expect(r.output).toEqual({ x: "outer", r: [{ own: "a" }, { own: "b" }] });
  });
});
