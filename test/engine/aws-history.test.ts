import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import { HISTORY_FORMAT_AWS, type HistoryEvent } from "../../engine/core/history.js";
import type { MemoryRunOptions } from "../../engine/drivers/memory.js";
import { compileProgram } from "../../engine/program.js";
import { replay } from "../../engine/replay.js";
import { details, execute, ofType } from "./helpers.js";

/**
 * AWS's history format (core/history.ts `HISTORY_FORMAT_AWS`), which a start asks
 * for in its `Started` event: previousEventId linked as AWS links it, assigned
 * variables on state exits, EvaluationFailed, `<Kind>StateFailed` once. The shapes
 * below are those of the histories recorded on AWS (test/conformance/data/histories.jsonl).
 * Journals without the format (every execution started before it) keep Stepwise's
 * earlier history: test/golden replays them.
 */

const aws: MemoryRunOptions = { historyFormat: HISTORY_FORMAT_AWS };

/** `id<previousEventId Type name`, one line per event. */
function shape(history: HistoryEvent[]): string[] {
  return history.map((e) => {
    const d = details(e);
    const name = typeof d.name === "string" ? ` ${d.name}` : "";
    const index = typeof d.index === "number" ? `#${d.index}` : "";
    return `${e.id}<${e.previousEventId} ${e.type}${name}${index}`;
  });
}

const twoPasses: StateMachineDefinition = {
  StartAt: "A",
  States: {
    A: { Type: "Pass", Assign: { x: 1, s: "text" }, Next: "B" },
    B: { Type: "Pass", End: true },
  },
};

describe("the history format", () => {
  it("is AWS's unless the start asks for Stepwise's earlier one", async () => {
    const now = await execute(twoPasses);
    expect(shape(now.history).slice(0, 2)).toEqual([
      "1<0 ExecutionStarted",
      "2<0 PassStateEntered A",
    ]);
    expect(now.runs.get(now.execution.executionId)!.historyFormat).toBe(HISTORY_FORMAT_AWS);
    const r = await execute(twoPasses, { historyFormat: "legacy" });
    expect(shape(r.history).slice(0, 2)).toEqual([
      "1<0 ExecutionStarted",
      "2<1 PassStateEntered A",
    ]);
    expect(details(r.history[2]!)).not.toHaveProperty("assignedVariables");
    expect(r.runs.get(r.execution.executionId)!.historyFormat).toBeUndefined();
  });

  it("is kept by the run and handed to its children", async () => {
    const r = await execute(
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
      { ...aws, input: [1, 2] },
    );
    expect([...r.runs.values()].map((run) => run.historyFormat)).toEqual([2, 2, 2]);
  });
});

describe("previousEventId in AWS's format", () => {
  it("links the first state to no event, then each event to the one before", async () => {
    const r = await execute(twoPasses, aws);
    expect(shape(r.history)).toEqual([
      "1<0 ExecutionStarted",
      "2<0 PassStateEntered A",
      "3<2 PassStateExited A",
      "4<3 PassStateEntered B",
      "5<4 PassStateExited B",
      "6<5 ExecutionSucceeded",
    ]);
  });

  it("starts a Map's next iteration from the last event of the one before", async () => {
    const r = await execute(
      {
        StartAt: "M",
        States: {
          M: {
            Type: "Map",
            MaxConcurrency: 1,
            ItemProcessor: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
            Next: "After",
          },
          After: { Type: "Pass", End: true },
        },
      },
      { ...aws, input: [1, 2] },
    );
    // localstack:test_base_scenarios::test_map_state_legacy_config_inline, as AWS recorded it.
    expect(shape(r.history)).toEqual([
      "1<0 ExecutionStarted",
      "2<0 MapStateEntered M",
      "3<2 MapStateStarted",
      "4<3 MapIterationStarted M#0",
      "5<4 PassStateEntered P",
      "6<5 PassStateExited P",
      "7<6 MapIterationSucceeded M#0",
      "8<6 MapIterationStarted M#1",
      "9<8 PassStateEntered P",
      "10<9 PassStateExited P",
      "11<10 MapIterationSucceeded M#1",
      "12<11 MapStateSucceeded",
      "13<11 MapStateExited M",
      "14<13 PassStateEntered After",
      "15<14 PassStateExited After",
      "16<15 ExecutionSucceeded",
    ]);
  });

  it("retries a Map from the failed iteration's last event, and writes MapStateFailed once", async () => {
    const r = await execute(
      {
        StartAt: "M",
        States: {
          M: {
            Type: "Map",
            MaxConcurrency: 1,
            ItemProcessor: {
              StartAt: "F",
              States: { F: { Type: "Fail", Error: "E", Cause: "C" } },
            },
            Retry: [{ ErrorEquals: ["E"], MaxAttempts: 1 }],
            End: true,
          },
        },
      },
      { ...aws, input: [1] },
    );
    // localstack:test_base_scenarios::test_map_state_retry.
    expect(shape(r.history)).toEqual([
      "1<0 ExecutionStarted",
      "2<0 MapStateEntered M",
      "3<2 MapStateStarted",
      "4<3 MapIterationStarted M#0",
      "5<4 FailStateEntered F",
      "6<5 MapIterationFailed M#0",
      "7<5 MapStateStarted",
      "8<7 MapIterationStarted M#0",
      "9<8 FailStateEntered F",
      "10<9 MapIterationFailed M#0",
      "11<9 MapStateFailed",
      "12<11 ExecutionFailed",
    ]);
  });

  it("links a Parallel branch to ParallelStateStarted and the exit to the last branch event", async () => {
    const r = await execute(
      {
        StartAt: "P",
        States: {
          P: {
            Type: "Parallel",
            Branches: [{ StartAt: "B", States: { B: { Type: "Pass", End: true } } }],
            End: true,
          },
        },
      },
      aws,
    );
    expect(shape(r.history)).toEqual([
      "1<0 ExecutionStarted",
      "2<0 ParallelStateEntered P",
      "3<2 ParallelStateStarted",
      "4<3 PassStateEntered B",
      "5<4 PassStateExited B",
      "6<5 ParallelStateSucceeded",
      "7<5 ParallelStateExited P",
      "8<7 ExecutionSucceeded",
    ]);
  });

  it("fails a caught Parallel from the failed branch's last event, without a cause it never had", async () => {
    const branch = { StartAt: "F", States: { F: { Type: "Fail" as const, Error: "FailureType" } } };
    const failed = await execute(
      { StartAt: "P", States: { P: { Type: "Parallel", Branches: [branch], End: true } } },
      aws,
    );
    // localstack:test_base_scenarios::test_parallel_state_fail.
    expect(shape(failed.history).slice(3)).toEqual([
      "4<3 FailStateEntered F",
      "5<4 ParallelStateFailed",
      "6<5 ExecutionFailed",
    ]);
    expect(details(failed.history[5]!)).toEqual({ error: "FailureType" });
    expect(failed.cause).toBeUndefined();
  });
});

describe("assigned variables in AWS's format", () => {
  it("go on the exit of the state that assigned them, each as JSON text", async () => {
    const r = await execute(twoPasses, aws);
    const [a, b] = ofType(r.history, "PassStateExited");
    expect(details(a!)).toEqual({
      name: "A",
      output: "{}",
      assignedVariables: { x: "1", s: '"text"' },
    });
    expect(details(b!)).not.toHaveProperty("assignedVariables");
  });

  it("are absent when an Assign assigns nothing", async () => {
    const r = await execute(
      { StartAt: "A", States: { A: { Type: "Pass", Assign: {}, End: true } } },
      aws,
    );
    expect(details(ofType(r.history, "PassStateExited")[0]!)).toEqual({ name: "A", output: "{}" });
  });

  it("are a Choice rule's, and a Wait's, recorded when it exits", async () => {
    const r = await execute(
      {
        QueryLanguage: "JSONata",
        StartAt: "C",
        States: {
          C: {
            Type: "Choice",
            Choices: [{ Condition: "{% true %}", Assign: { picked: "rule" }, Next: "W" }],
            Default: "W",
          },
          W: { Type: "Wait", Seconds: 1, Assign: { waited: "{% 1 + 1 %}" }, End: true },
        },
      },
      aws,
    );
    expect(details(ofType(r.history, "ChoiceStateExited")[0]!).assignedVariables).toEqual({
      picked: '"rule"',
    });
    expect(details(ofType(r.history, "WaitStateExited")[0]!).assignedVariables).toEqual({
      waited: "2",
    });
  });

  it("are a catcher's on the exit of the state it caught", async () => {
    const r = await execute(
      {
        StartAt: "T",
        States: {
          T: {
            Type: "Task",
            Resource: "arn:aws:states:::lambda:invoke",
            Catch: [{ ErrorEquals: ["States.ALL"], Assign: { failed: true }, Next: "Done" }],
            End: true,
          },
          Done: { Type: "Pass", End: true },
        },
      },
      { ...aws, mocks: { T: [{ Throw: { Error: "Oops" } }] } },
    );
    expect(details(ofType(r.history, "TaskStateExited")[0]!)).toMatchObject({
      name: "T",
      assignedVariables: { failed: "true" },
    });
  });
});

describe("EvaluationFailed in AWS's format", () => {
  it("names the error, cause, field and state of a JSONata failure, after what the state followed", async () => {
    const r = await execute(
      {
        QueryLanguage: "JSONata",
        StartAt: "S",
        States: { S: { Type: "Pass", Output: { result: "{% $doesNotExist %}" }, End: true } },
      },
      aws,
    );
    // localstack:test_assign_reference_variables::test_undefined_reference[BASE_UNDEFINED_OUTPUT_FIELD].
    expect(shape(r.history)).toEqual([
      "1<0 ExecutionStarted",
      "2<0 PassStateEntered S",
      "3<0 EvaluationFailed",
      "4<3 ExecutionFailed",
    ]);
    expect(r.history[2]!.evaluationFailedEventDetails).toEqual({
      error: "States.QueryEvaluationError",
      cause:
        "An error occurred while executing the state 'S' (entered at the event id #2). The JSONata expression '$doesNotExist' specified for the field 'Output/result' returned nothing (undefined).",
      location: "Output/result",
      state: "S",
    });
  });

  it("follows a Wait's WaitStateEntered, which evaluates once entered", async () => {
    const r = await execute(
      {
        QueryLanguage: "JSONata",
        StartAt: "W",
        States: { W: { Type: "Wait", Timestamp: "{% 'not a time' %}", End: true } },
      },
      aws,
    );
    expect(shape(r.history).slice(1)).toEqual([
      "2<0 WaitStateEntered W",
      "3<2 EvaluationFailed",
      "4<3 ExecutionFailed",
    ]);
    expect(r.history[2]!.evaluationFailedEventDetails).toMatchObject({ location: "Timestamp" });
  });

  it("is followed by MapStateFailed in a Map, and has no location without a field", async () => {
    const r = await execute(
      {
        QueryLanguage: "JSONata",
        StartAt: "Start",
        States: {
          Start: { Type: "Pass", Next: "M" },
          M: {
            Type: "Map",
            ItemProcessor: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
            End: true,
          },
        },
      },
      { ...aws, input: "not an array" },
    );
    // localstack:test_base_scenarios::test_map_state_items_input_types[string].
    expect(shape(r.history).slice(3)).toEqual([
      "4<3 MapStateEntered M",
      "5<3 EvaluationFailed",
      "6<5 MapStateFailed",
      "7<6 ExecutionFailed",
    ]);
    expect(r.history[4]!.evaluationFailedEventDetails).not.toHaveProperty("location");
  });

  it("is not written for a JSONPath failure (States.Runtime)", async () => {
    const r = await execute(
      { StartAt: "S", States: { S: { Type: "Pass", InputPath: "$.missing", End: true } } },
      aws,
    );
    expect(shape(r.history)).toEqual([
      "1<0 ExecutionStarted",
      "2<0 PassStateEntered S",
      "3<2 ExecutionFailed",
    ]);
  });
});

describe("a Map's failure tolerance in AWS's format", () => {
  it("is read once the Map has started", async () => {
    const definition: StateMachineDefinition = {
      StartAt: "M",
      States: {
        M: {
          Type: "Map",
          ToleratedFailureCountPath: "$.count",
          ItemsPath: "$.items",
          ItemProcessor: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
          End: true,
        },
      },
    };
    const input = { items: [1], count: -1 };
    const before = await execute(definition, { historyFormat: "legacy", input });
    const now = await execute(definition, { ...aws, input });
    expect(before.history.map((e) => e.type)).toEqual([
      "ExecutionStarted",
      "MapStateEntered",
      "ExecutionFailed",
    ]);
    // localstack:test_base_scenarios::test_map_state_tolerated_failure_count_path[-1].
    expect(now.history.map((e) => e.type)).toEqual([
      "ExecutionStarted",
      "MapStateEntered",
      "MapStateStarted",
      "ExecutionFailed",
    ]);
    expect(now.error).toBe(before.error);
  });
});

describe("replay of AWS's format", () => {
  const nested: StateMachineDefinition = {
    StartAt: "M",
    States: {
      M: {
        Type: "Map",
        MaxConcurrency: 1,
        ItemProcessor: {
          StartAt: "P",
          States: {
            P: {
              Type: "Parallel",
              Branches: [
                { StartAt: "B", States: { B: { Type: "Pass", Assign: { v: 1 }, End: true } } },
              ],
              End: true,
            },
          },
        },
        End: true,
      },
    },
  };

  it("rebuilds the same history and runs from the journal", async () => {
    const r = await execute(nested, { ...aws, input: [1, 2, 3] });
    const rebuilt = replay(compileProgram(nested), r.execution, r.journal);
    expect(rebuilt.history).toEqual(r.history);
    expect(rebuilt.runs).toEqual(r.runs);
  });

  it("still steps when a driver does not pass a child's last events on (links by the parent's chain)", async () => {
    const r = await execute(nested, { ...aws, input: [1, 2, 3] });
    const journal = r.journal.map((j) => {
      if (j.event.type !== "ChildEnded") return j;
      const { eventIds: _ids, ...event } = j.event;
      return { ...j, event };
    });
    const rebuilt = replay(compileProgram(nested), r.execution, journal);
    expect(rebuilt.history.map((e) => e.type)).toEqual(r.history.map((e) => e.type));
    expect(rebuilt.runs.get(r.execution.executionId)!.status).toBe("SUCCEEDED");
  });
});
