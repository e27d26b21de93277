import { describe, expect, it } from "vitest";
import type { ParallelState, StateScope } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { at, details, execute, ofType, only, types } from "./helpers.js";

const waitThenResult = (seconds: number, result: Json): StateScope => ({
  StartAt: "W",
  States: {
    W: { Type: "Wait", Seconds: seconds, Next: "R" },
    R: { Type: "Pass", Result: result, End: true },
  },
});

const failing = (error: string, cause: string, afterSeconds = 0): StateScope => ({
  StartAt: "W",
  States: {
    W: { Type: "Wait", Seconds: afterSeconds, Next: "F" },
    F: { Type: "Fail", Error: error, Cause: cause },
  },
});

function parallel(branches: StateScope[], extra: Partial<ParallelState> = {}): ParallelState {
  return { Type: "Parallel", Branches: branches, End: true, ...extra } as ParallelState;
}

describe("Parallel state", () => {
  it("outputs the branch results in branch order, not completion order", async () => {
    const r = await execute(
      {
        StartAt: "P",
        States: {
          P: parallel([
            waitThenResult(30, "slow"),
            waitThenResult(1, "fast"),
            waitThenResult(10, "mid"),
          ]),
        },
      },
      { input: {} },
    );
    expect(r.output).toEqual(["slow", "fast", "mid"]);
    // The state ends when the slowest branch does.
    expect(at(only(ofType(r.history, "ParallelStateExited")))).toBe(30_000);
  });

  it("gives every branch the same input (after InputPath and Parameters)", async () => {
    const echo: StateScope = { StartAt: "E", States: { E: { Type: "Pass", End: true } } };
    const r = await execute(
      {
        StartAt: "P",
        States: {
          P: parallel([echo, echo], {
            InputPath: "$.in",
            Parameters: { "v.$": "$.v", "branchless.$": "$$.State.Name" },
            ResultSelector: { "first.$": "$[0]", "count.$": "States.ArrayLength($)" },
            ResultPath: "$.res",
          }),
        },
      },
      { input: { in: { v: 1 } } },
    );
    expect(r.output).toEqual({
      in: { v: 1 },
      res: { first: { v: 1, branchless: "P" }, count: 2 },
    });
  });

  it("records ParallelStateEntered, Started, Succeeded and Exited around the branches", async () => {
    const r = await execute({
      StartAt: "P",
      States: { P: parallel([{ StartAt: "A", States: { A: { Type: "Pass", End: true } } }]) },
    });
    expect(types(r.history)).toEqual([
      "ExecutionStarted",
      "ParallelStateEntered",
      "ParallelStateStarted",
      "PassStateEntered",
      "PassStateExited",
      "ParallelStateSucceeded",
      "ParallelStateExited",
      "ExecutionSucceeded",
    ]);
  });

  // ASL spec, "Parallel State": "If any branch fails … the entire Parallel State fails
  // and all the branches are stopped."
  it("a failing branch fails the state with that branch's error", async () => {
    const r = await execute({
      StartAt: "P",
      States: { P: parallel([waitThenResult(10, "ok"), failing("Branch.Boom", "went wrong", 1)]) },
    });
    expect(r).toMatchObject({ status: "FAILED", error: "Branch.Boom", cause: "went wrong" });
    expect(details(only(ofType(r.history, "ParallelStateFailed")))).toMatchObject({
      error: "Branch.Boom",
    });
  });

  it("stops the other branches: they record nothing more, even when the execution goes on", async () => {
    const r = await execute({
      StartAt: "P",
      States: {
        P: parallel(
          [
            // Would exit its Wait at t=10 s and then run "Late".
            {
              StartAt: "Slow",
              States: {
                Slow: { Type: "Wait", Seconds: 10, Next: "Late" },
                Late: { Type: "Pass", End: true },
              },
            },
            failing("Boom", "c", 1),
          ],
          {
            End: undefined,
            Next: "After",
            Catch: [{ ErrorEquals: ["States.ALL"], Next: "After" }],
          },
        ),
        // Keeps the execution alive past the moment the stopped branch would have woken.
        After: { Type: "Wait", Seconds: 60, End: true },
      },
    });
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual({ Error: "Boom", Cause: "c" });
    const names = r.history.map((e) => details(e).name);
    expect(names).not.toContain("Late");
    const slowExits = ofType(r.history, "WaitStateExited").filter(
      (e) => details(e).name === "Slow",
    );
    expect(slowExits).toEqual([]);
    expect(at(only(ofType(r.history, "ExecutionSucceeded")))).toBe(61_000);
  });

  it("cancels a stopped branch's task: its late result is not recorded", async () => {
    let calls = 0;
    const r = await execute(
      {
        StartAt: "P",
        States: {
          P: parallel(
            [
              { StartAt: "T", States: { T: { Type: "Task", Resource: "slow", End: true } } },
              { StartAt: "F", States: { F: { Type: "Fail", Error: "Boom" } } },
            ],
            {
              End: undefined,
              Next: "After",
              Catch: [{ ErrorEquals: ["States.ALL"], Next: "After" }],
            },
          ),
          // The execution is still running when the stopped branch's task answers.
          After: { Type: "Wait", Seconds: 5, End: true },
        },
      },
      {
        tasks: {
          slow: async () => {
            calls += 1;
            await new Promise((resolve) => setTimeout(resolve, 20));
            return "late";
          },
        },
      },
    );
    expect(r).toMatchObject({ status: "SUCCEEDED", output: { Error: "Boom" } });
    expect(calls).toBe(1);
    expect(ofType(r.history, "TaskSucceeded", "TaskStateExited")).toEqual([]);
  });

  it("Retry on a Parallel state reruns every branch", async () => {
    const r = await execute(
      {
        StartAt: "P",
        States: {
          P: parallel(
            [
              { StartAt: "A", States: { A: { Type: "Pass", Result: "a", End: true } } },
              { StartAt: "T", States: { T: { Type: "Task", Resource: "x", End: true } } },
            ],
            { Retry: [{ ErrorEquals: ["Flaky"], IntervalSeconds: 3 }] },
          ),
        },
      },
      { mocks: { T: [{ Throw: { Error: "Flaky" } }, { Return: "t" }] } },
    );
    expect(r.output).toEqual(["a", "t"]);
    expect(ofType(r.history, "ParallelStateStarted").map(at)).toEqual([0, 3_000]);
    expect(ofType(r.history, "PassStateEntered")).toHaveLength(2);
  });

  it("Catch on a Parallel state with ResultPath keeps the state input", async () => {
    const r = await execute(
      {
        StartAt: "P",
        States: {
          P: parallel([failing("Nope", "because")], {
            End: undefined,
            Next: "Handled",
            Catch: [{ ErrorEquals: ["Nope"], ResultPath: "$.error", Next: "Handled" }],
          }),
          Handled: { Type: "Pass", End: true },
        },
      },
      { input: { order: 7 } },
    );
    expect(r.output).toEqual({ order: 7, error: { Error: "Nope", Cause: "because" } });
  });

  it("nested Parallel states return nested arrays", async () => {
    const leaf = (v: Json): StateScope => ({
      StartAt: "L",
      States: { L: { Type: "Pass", Result: v, End: true } },
    });
    const r = await execute({
      StartAt: "P",
      States: {
        P: parallel([leaf(1), { StartAt: "Q", States: { Q: parallel([leaf(2), leaf(3)]) } }]),
      },
    });
    expect(r.output).toEqual([1, [2, 3]]);
  });
});
