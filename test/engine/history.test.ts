import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import { details, execute, ofType, types } from "./helpers.js";

// AWS API reference, HistoryEvent: "The id of the event. Events are numbered
// sequentially, starting at one."; `previousEventId` is "the id of the previous event".

/** One machine that visits every state type. */
const everything: StateMachineDefinition = {
  StartAt: "Pass",
  States: {
    Pass: { Type: "Pass", Next: "Task" },
    Task: { Type: "Task", Resource: "r", Next: "Choice" },
    Choice: { Type: "Choice", Choices: [{ Variable: "$.go", BooleanEquals: true, Next: "Wait" }] },
    Wait: { Type: "Wait", Seconds: 2, Next: "Parallel" },
    Parallel: {
      Type: "Parallel",
      Branches: [
        { StartAt: "B1", States: { B1: { Type: "Pass", End: true } } },
        { StartAt: "B2", States: { B2: { Type: "Wait", Seconds: 1, End: true } } },
      ],
      ResultPath: null,
      Next: "Map",
    },
    Map: {
      Type: "Map",
      ItemsPath: "$.items",
      ItemProcessor: { StartAt: "It", States: { It: { Type: "Pass", End: true } } },
      ResultPath: null,
      Next: "Done",
    },
    Done: { Type: "Succeed" },
  },
};

const input = { go: true, items: [1, 2, 3] };

async function run() {
  return execute(everything, { input, tasks: { r: (x) => x } });
}

function checkIdsAndChains(history: HistoryEvent[]): void {
  expect(history.map((e) => e.id)).toEqual(history.map((_, i) => i + 1));
  expect(history[0]!.previousEventId).toBe(0);
  // AWS links the first state's entry to 0, not to ExecutionStarted.
  expect(history[1]!.previousEventId).toBe(0);
  for (const e of history.slice(2)) {
    expect(e.previousEventId).toBeGreaterThan(0);
    expect(e.previousEventId).toBeLessThan(e.id);
  }
  // Timestamps never go backwards.
  for (let i = 1; i < history.length; i++) {
    expect(Date.parse(history[i]!.timestamp)).toBeGreaterThanOrEqual(
      Date.parse(history[i - 1]!.timestamp),
    );
  }
}

describe("history events", () => {
  it("are numbered 1..N without gaps, each pointing at an earlier event", async () => {
    const r = await run();
    expect(r.status).toBe("SUCCEEDED");
    checkIdsAndChains(r.history);
  });

  it("chain previousEventId to the event just before in a sequential execution", async () => {
    const r = await execute(
      {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Next: "B" },
          B: { Type: "Task", Resource: "r", Retry: [{ ErrorEquals: ["E"] }], Next: "C" },
          C: { Type: "Wait", Seconds: 1, End: true },
        },
      },
      { mocks: { B: [{ Throw: { Error: "E" } }, { Return: 1 }] } },
    );
    checkIdsAndChains(r.history);
    for (const e of r.history.slice(2)) expect(e.previousEventId).toBe(e.id - 1);
  });

  it("are numbered without gaps for a failing execution with retries and a stopped Map", async () => {
    const r = await execute(
      {
        StartAt: "M",
        States: {
          M: {
            Type: "Map",
            ItemProcessor: {
              StartAt: "W",
              States: {
                W: { Type: "Wait", SecondsPath: "$", Next: "F" },
                F: { Type: "Fail", Error: "Stop" },
              },
            },
            Retry: [{ ErrorEquals: ["Stop"], MaxAttempts: 1 }],
            End: true,
          },
        },
      },
      { input: [1, 5, 9] },
    );
    expect(r.status).toBe("FAILED");
    checkIdsAndChains(r.history);
  });

  it("inside a branch, previousEventId chains through that branch's own events", async () => {
    const r = await run();
    const b2Entered = r.history.find(
      (e) => details(e).name === "B2" && e.type === "WaitStateEntered",
    )!;
    const b2Exited = r.history.find(
      (e) => details(e).name === "B2" && e.type === "WaitStateExited",
    )!;
    expect(b2Exited.previousEventId).toBe(b2Entered.id);
  });

  it("the first event of each Map iteration follows that iteration's MapIterationStarted", async () => {
    const r = await run();
    const started = ofType(r.history, "MapIterationStarted");
    const firsts = r.history.filter(
      (e) => e.type === "PassStateEntered" && details(e).name === "It",
    );
    expect(firsts).toHaveLength(3);
    expect(firsts.map((e) => e.previousEventId)).toEqual(started.map((e) => e.id));
  });

  it("use AWS's event names for every state type, in AWS's order", async () => {
    const r = await run();
    const top = r.history.filter((e) => !["B1", "B2", "It"].includes(String(details(e).name)));
    expect(types(top)).toEqual([
      "ExecutionStarted",
      "PassStateEntered",
      "PassStateExited",
      "TaskStateEntered",
      "TaskScheduled",
      "TaskStarted",
      "TaskSucceeded",
      "TaskStateExited",
      "ChoiceStateEntered",
      "ChoiceStateExited",
      "WaitStateEntered",
      "WaitStateExited",
      "ParallelStateEntered",
      "ParallelStateStarted",
      "ParallelStateSucceeded",
      "ParallelStateExited",
      "MapStateEntered",
      "MapStateStarted",
      "MapIterationStarted",
      "MapIterationStarted",
      "MapIterationStarted",
      "MapIterationSucceeded",
      "MapIterationSucceeded",
      "MapIterationSucceeded",
      "MapStateSucceeded",
      "MapStateExited",
      "SucceedStateEntered",
      "SucceedStateExited",
      "ExecutionSucceeded",
    ]);
  });

  it("carry AWS's details: names, inputs and outputs as JSON text", async () => {
    const r = await run();
    const started = ofType(r.history, "ExecutionStarted")[0]!;
    expect(started.executionStartedEventDetails?.input).toBe(JSON.stringify(input));
    const passEntered = ofType(r.history, "PassStateEntered")[0]!;
    expect(passEntered.stateEnteredEventDetails).toEqual({
      name: "Pass",
      input: JSON.stringify(input),
    });
    const taskScheduled = ofType(r.history, "TaskScheduled")[0]!;
    expect(taskScheduled.taskScheduledEventDetails).toMatchObject({
      resource: "r",
      parameters: JSON.stringify(input),
    });
    const succeeded = ofType(r.history, "ExecutionSucceeded")[0]!;
    expect(succeeded.executionSucceededEventDetails?.output).toBe(JSON.stringify(input));
  });

  it("end with ExecutionFailed carrying error and cause", async () => {
    const r = await execute({
      StartAt: "F",
      States: { F: { Type: "Fail", Error: "E", Cause: "C" } },
    });
    const last = r.history[r.history.length - 1]!;
    expect(last.type).toBe("ExecutionFailed");
    expect(last.executionFailedEventDetails).toEqual({ error: "E", cause: "C" });
  });

  it("record a task failure as TaskFailed with error and cause", async () => {
    const r = await execute(
      {
        StartAt: "T",
        States: { T: { Type: "Task", Resource: "arn:aws:states:::lambda:invoke", End: true } },
      },
      { mocks: { T: [{ Throw: { Error: "Oops", Cause: "why" } }] } },
    );
    expect(ofType(r.history, "TaskFailed")[0]!.taskFailedEventDetails).toEqual({
      resourceType: "lambda",
      resource: "invoke",
      error: "Oops",
      cause: "why",
    });
  });

  it("end with ExecutionTimedOut when the machine's TimeoutSeconds runs out", async () => {
    const r = await execute({
      TimeoutSeconds: 5,
      StartAt: "W",
      States: { W: { Type: "Wait", Seconds: 60, End: true } },
    });
    expect(r.status).toBe("TIMED_OUT");
    const last = r.history[r.history.length - 1]!;
    expect(last.type).toBe("ExecutionTimedOut");
    expect(Date.parse(last.timestamp) - Date.parse(r.history[0]!.timestamp)).toBe(5000);
    expect(ofType(r.history, "WaitStateExited")).toEqual([]);
  });

  // AWS API reference, HistoryEvent: MapIterationSucceeded/Failed/Aborted events carry
  // `mapIterationSucceededEventDetails`, `mapIterationFailedEventDetails` and
  // `mapIterationAbortedEventDetails` (each a MapIterationEventDetails {name, index}).
  it("name each Map iteration event's details after its own type", async () => {
    const r = await execute(
      {
        StartAt: "M",
        States: {
          M: {
            Type: "Map",
            ItemProcessor: {
              StartAt: "C",
              States: {
                C: {
                  Type: "Choice",
                  Choices: [{ Variable: "$", NumericEquals: 1, Next: "F" }],
                  Default: "W",
                },
                F: { Type: "Fail", Error: "One" },
                W: { Type: "Wait", Seconds: 5, End: true },
              },
            },
            ToleratedFailureCount: 0,
            Catch: [{ ErrorEquals: ["States.ALL"], Next: "After" }],
            End: true,
          },
          After: { Type: "Wait", Seconds: 10, End: true },
        },
      },
      { input: [0, 1] },
    );
    const keyOf = (e: HistoryEvent) => Object.keys(e).find((k) => k.endsWith("EventDetails"));
    expect(ofType(r.history, "MapIterationStarted").map(keyOf)).toEqual([
      "mapIterationStartedEventDetails",
      "mapIterationStartedEventDetails",
    ]);
    expect(ofType(r.history, "MapIterationFailed").map(keyOf)).toEqual([
      "mapIterationFailedEventDetails",
    ]);
    expect(ofType(r.history, "MapIterationAborted").map(keyOf)).toEqual([
      "mapIterationAbortedEventDetails",
    ]);
    const ok = await execute(
      {
        StartAt: "M",
        States: {
          M: {
            Type: "Map",
            ItemProcessor: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
            End: true,
          },
        },
      },
      { input: [1] },
    );
    expect(ofType(ok.history, "MapIterationSucceeded").map(keyOf)).toEqual([
      "mapIterationSucceededEventDetails",
    ]);
  });
});
