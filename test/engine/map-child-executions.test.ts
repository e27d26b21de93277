import { describe, expect, it } from "vitest";
import type { MapState, StateScope } from "../../engine/core/definition.js";
import {
  isChildExecutionId,
  mapRunChildExecution,
  parseChildExecutionName,
} from "../../engine/states/map-child-executions.js";
import type { Json } from "../../engine/core/json.js";
import { compileProgram } from "../../engine/program.js";
import { redrivePlan } from "../../engine/redrive.js";
import { details, execute, ofType, single, types } from "./helpers.js";

/**
 * A Distributed Map's items run as child executions of its Map Run (issue #37), on
 * the in-memory driver: each with a history of its own, the parent's with only the
 * Map Run's events; and the Map's numeric fields read from numeric strings (AWS).
 */
const identity: StateScope = { StartAt: "I", States: { I: { Type: "Pass", End: true } } };

function distributed(extra: Partial<MapState> = {}, scope: StateScope = identity): MapState {
  return {
    Type: "Map",
    ItemProcessor: {
      ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
      ...scope,
    },
    End: true,
    ...extra,
  } as MapState;
}

describe("a Map Run's child executions", () => {
  it("are named under the Map Run's state machine ARN, from its id and the item's index", () => {
    const arn = "arn:aws:states:us-east-1:123456789012:mapRun:machine/L:0b1c-22";
    expect(mapRunChildExecution(arn, 3)).toEqual({
      arn: "arn:aws:states:us-east-1:123456789012:execution:machine/L:0b1c-22-3",
      name: "0b1c-22-3",
      mapRunArn: arn,
    });
    expect(mapRunChildExecution("not an arn", 0)).toBeUndefined();
    expect(parseChildExecutionName("0b1c-22-3")).toEqual({ mapRunId: "0b1c-22", index: 3 });
    expect(isChildExecutionId("arn:aws:states:r:1:execution:machine/L:0b1c-22-3")).toBe(true);
    expect(isChildExecutionId("machine/L:0b1c-22-3")).toBe(true);
    expect(isChildExecutionId("arn:aws:states:r:1:execution:machine:name")).toBe(false);
  });

  it("write their own histories; the parent's holds only the Map Run's events", async () => {
    const r = await execute(
      single(distributed({ Label: "L", ItemSelector: { "v.$": "$$.Map.Item.Value" } })),
      { input: [1, 2, 3] },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual([{ v: 1 }, { v: 2 }, { v: 3 }]);
    expect(types(r.history)).toEqual([
      "ExecutionStarted",
      "MapStateEntered",
      "MapStateStarted",
      "MapRunStarted",
      "MapRunSucceeded",
      "MapStateSucceeded",
      "MapStateExited",
      "ExecutionSucceeded",
    ]);
    // AWS's links: the Map Run's end follows its start, the state's end the Map Run's.
    const [runStarted, runSucceeded, , exited] = r.history.slice(3);
    expect(runSucceeded!.previousEventId).toBe(runStarted!.id);
    expect(exited!.previousEventId).toBe(runSucceeded!.id);

    const mapRunArn = details(ofType(r.history, "MapRunStarted")[0]!).mapRunArn as string;
    const children = [...r.childExecutions.values()];
    expect(children.map((c) => c.name)).toEqual(
      [0, 1, 2].map((i) => `${mapRunArn.split(":").at(-1)}-${i}`),
    );
    for (const [i, child] of children.entries()) {
      expect(child.mapRunArn).toBe(mapRunArn);
      expect(child.arn).toMatch(/:execution:machine\/L:[0-9a-f-]+-\d$/);
      expect(child.status).toBe("SUCCEEDED");
      expect(child.history.map((e) => [e.id, e.previousEventId, e.type])).toEqual([
        [1, 0, "ExecutionStarted"],
        [2, 0, "PassStateEntered"],
        [3, 2, "PassStateExited"],
        [4, 3, "ExecutionSucceeded"],
      ]);
      // Its input is the item as the ItemSelector made it.
      expect(JSON.parse(details(child.history[0]!).input as string)).toEqual({ v: i + 1 });
    }
  });

  it("see their own execution in $$.Execution", async () => {
    const scope: StateScope = {
      StartAt: "P",
      States: { P: { Type: "Pass", Parameters: { "id.$": "$$.Execution.Id" }, End: true } },
    };
    const r = await execute(single(distributed({}, scope)), { input: [0] });
    const child = [...r.childExecutions.values()][0]!;
    expect(r.output).toEqual([{ id: child.arn }]);
  });

  it("fail on their own: ExecutionFailed in the child, the Map Run fails in the parent", async () => {
    const scope: StateScope = {
      StartAt: "F",
      States: { F: { Type: "Fail", Error: "Boom", Cause: "no" } },
    };
    const r = await execute(single(distributed({}, scope)), { input: [0] });
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("Boom");
    const child = [...r.childExecutions.values()][0]!;
    expect(child.status).toBe("FAILED");
    expect(types(child.history).at(-1)).toBe("ExecutionFailed");
    expect(types(r.history)).toContain("MapRunFailed");
    expect(types(r.history).filter((t) => t.startsWith("MapIteration"))).toEqual([]);
  });

  it("a redrive of the parent redrives its Map Run: same ARN, MapRunRedriven counted", async () => {
    // Item 1 fails twice: the first redrive fails the Map Run again, the second succeeds.
    let failures = 2;
    const tasks = {
      "arn:local:work": (input: Json) => {
        if (input === 1 && failures > 0) {
          failures -= 1;
          throw { error: "Broken", cause: "not yet" };
        }
        return (input as number) * 10;
      },
    };
    const scope: StateScope = {
      StartAt: "W",
      States: { W: { Type: "Task", Resource: "arn:local:work", End: true } },
    };
    const program = compileProgram(single(distributed({ Label: "L" }, scope)));
    const options = { startTime: "2024-01-01T00:00:00.000Z", executionName: "exec", tasks };
    const first = await execute(single(distributed({ Label: "L" }, scope)), {
      input: [0, 1, 2],
      tasks,
    });
    expect(first.status).toBe("FAILED");
    const mapRunArn = details(ofType(first.history, "MapRunStarted")[0]!).mapRunArn;
    const plan1 = redrivePlan(program, first.execution, first.journal)!;
    expect(plan1.point.join?.mapRun).toEqual({ arn: mapRunArn, redriveCount: 1 });
    const second = await execute(single(distributed({ Label: "L" }, scope)), {
      ...options,
      redrive: { from: first, plan: plan1, redriveCount: 1 },
    });
    expect(second.status).toBe("FAILED");
    const plan2 = redrivePlan(program, second.execution, second.journal)!;
    expect(plan2.point.join?.mapRun).toEqual({ arn: mapRunArn, redriveCount: 2 });
    const third = await execute(single(distributed({ Label: "L" }, scope)), {
      ...options,
      redrive: { from: second, plan: plan2, redriveCount: 2 },
    });
    expect(third.status).toBe("SUCCEEDED");
    expect(third.output).toEqual([0, 10, 20]);
    const mapRunEvents = ofType(
      third.history,
      "MapRunStarted",
      "MapRunRedriven",
      "MapRunFailed",
      "MapRunSucceeded",
    );
    expect(types(mapRunEvents)).toEqual([
      "MapRunStarted",
      "MapRunFailed",
      "MapRunRedriven",
      "MapRunFailed",
      "MapRunRedriven",
      "MapRunSucceeded",
    ]);
    expect(ofType(third.history, "MapRunRedriven").map((e) => details(e))).toEqual([
      { mapRunArn, redriveCount: 1 },
      { mapRunArn, redriveCount: 2 },
    ]);
    // Where MapRunStarted was: right after the redriven state's MapStateStarted.
    const all = types(third.history);
    const redriven = all.lastIndexOf("MapRunRedriven");
    expect(all[redriven - 1]).toBe("MapStateStarted");
    // The item ran again as the same child execution, redriven twice; no iterations.
    const children = [...third.childExecutions.values()];
    expect(children).toHaveLength(3);
    expect(children.every((c) => c.mapRunArn === mapRunArn && c.status === "SUCCEEDED")).toBe(true);
    expect(all.filter((t) => t.startsWith("MapIteration"))).toEqual([]);
  });

  it("see no variable of the parent's scope, STANDARD and EXPRESS alike; the ItemSelector does", async () => {
    // AWS: a Distributed Map's child workflows reference only their own variables; the
    // values they need travel in their input (ItemSelector), evaluated in the parent.
    for (const language of ["JSONPath", "JSONata"] as const) {
      const reads: Record<string, unknown> =
        language === "JSONPath"
          ? { Type: "Pass", Parameters: { "bucket.$": "$bucket" }, End: true }
          : { Type: "Pass", Output: "{% $bucket %}", End: true };
      const machine = (mode: "INLINE" | "STANDARD" | "EXPRESS", processor: object) => ({
        QueryLanguage: language,
        StartAt: "Set",
        States: {
          Set: { Type: "Pass", Assign: { bucket: "b-1" }, Next: "Fan" },
          Fan: {
            Type: "Map",
            ...(language === "JSONPath"
              ? { ItemsPath: "$.items" }
              : { Items: "{% $states.input.items %}" }),
            ItemProcessor: {
              ...(mode === "INLINE"
                ? {}
                : { ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: mode } }),
              ...processor,
            },
            End: true,
          },
        },
      });
      const reading = { StartAt: "Read", States: { Read: reads } };
      const inline = await execute(machine("INLINE", reading) as never, { input: { items: [1] } });
      expect(inline.status).toBe("SUCCEEDED");
      for (const mode of ["STANDARD", "EXPRESS"] as const) {
        const r = await execute(machine(mode, reading) as never, { input: { items: [1] } });
        expect(r.status, `${mode} ${language}`).toBe("FAILED");
        expect(r.error).toBe(
          language === "JSONPath" ? "States.Runtime" : "States.QueryEvaluationError",
        );
        expect(r.cause).toContain("$bucket");
        // Its own variables it sees; the parent's ones reach it through the ItemSelector.
        const own = {
          StartAt: "Own",
          States: {
            Own: { Type: "Pass", Assign: { bucket: "own" }, Next: "Read" },
            Read: reads,
          },
        };
        const selected = machine(mode, own) as { States: { Fan: Record<string, unknown> } };
        selected.States.Fan.ItemSelector =
          language === "JSONPath" ? { "from.$": "$bucket" } : { from: "{% $bucket %}" };
        const ok = await execute(selected as never, { input: { items: [1] } });
        expect(ok.status, `${mode} ${language}`).toBe("SUCCEEDED");
        expect(ok.output).toEqual([language === "JSONPath" ? { bucket: "own" } : "own"]);
      }
    }
  });

  it("an INLINE Map keeps its iterations in the parent's history", async () => {
    const r = await execute(
      single({ Type: "Map", ItemProcessor: identity, End: true } as MapState),
      {
        input: [1],
      },
    );
    expect(r.childExecutions.size).toBe(0);
    expect(ofType(r.history, "MapIterationStarted")).toHaveLength(1);
  });
});

describe("a Map's numeric fields from a numeric string (AWS)", () => {
  // AWS (Map state, "MaxConcurrencyPath", "ToleratedFailureCountPath",
  // "ToleratedFailurePercentagePath"): the reference path selects the value from the
  // state input; a count given as text, such as a variable holding "1", is taken as
  // the number it spells, and checked as that number would be.
  const failing: StateScope = {
    StartAt: "F",
    States: { F: { Type: "Fail", Error: "Boom" } },
  };

  it('MaxConcurrencyPath: "1" runs the items one at a time', async () => {
    const r = await execute(
      single(distributed({ MaxConcurrencyPath: "$.limit", ItemsPath: "$.items" })),
      {
        input: { limit: "1", items: [1, 2] },
      },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual([1, 2]);
  });

  it('MaxConcurrencyPath from a variable holding "2"', async () => {
    const r = await execute(
      {
        StartAt: "A",
        States: {
          A: { Type: "Pass", Assign: { limit: "2" }, Next: "M" },
          M: distributed({ MaxConcurrencyPath: "$limit" }),
        },
      },
      { input: [1, 2, 3] },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual([1, 2, 3]);
  });

  it('ToleratedFailureCountPath: "1" tolerates one failed item', async () => {
    const ok = await execute(
      single(distributed({ ToleratedFailureCountPath: "$.n", ItemsPath: "$.items" }, failing)),
      { input: { n: "1", items: [1, 2] } },
    );
    expect(ok.status).toBe("FAILED");
    expect(ok.error).toBe("States.ExceedToleratedFailureThreshold");
    const tolerated = await execute(
      single(distributed({ ToleratedFailureCountPath: "$.n", ItemsPath: "$.items" }, failing)),
      { input: { n: "2", items: [1, 2] } },
    );
    expect(tolerated.status).toBe("SUCCEEDED");
    expect(tolerated.output).toEqual([null, null]);
  });

  it('ToleratedFailurePercentagePath: "50.5" and "100" are percentages, "-1" is refused as -1 is', async () => {
    const half = await execute(
      single(distributed({ ToleratedFailurePercentagePath: "$.p", ItemsPath: "$.items" }, failing)),
      { input: { p: "50.5", items: [1, 2] } },
    );
    // Both items fail: 100% > 50.5%; "100" tolerates them.
    expect(half.status).toBe("FAILED");
    expect(half.error).toBe("States.ExceedToleratedFailureThreshold");
    const all = await execute(
      single(distributed({ ToleratedFailurePercentagePath: "$.p", ItemsPath: "$.items" }, failing)),
      { input: { p: "100", items: [1, 2] } },
    );
    expect(all.status).toBe("SUCCEEDED");
    const negative = await execute(
      single(distributed({ ToleratedFailurePercentagePath: "$.p", ItemsPath: "$.items" })),
      { input: { p: "-1", items: [1] } },
    );
    expect(negative.error).toBe("States.Runtime");
    expect(negative.cause).toContain("ToleratedFailurePercentage must be between 0 and 100.");
  });

  it("text that is no number is still refused, naming the value", async () => {
    const r = await execute(
      single(distributed({ MaxConcurrencyPath: "$.limit", ItemsPath: "$.items" })),
      {
        input: { limit: "one", items: [1] },
      },
    );
    expect(r.error).toBe("States.Runtime");
    expect(r.cause).toContain('The MaxConcurrencyPath field refers to value "one"');
  });
});
