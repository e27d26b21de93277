import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { replay } from "../../engine/replay.js";
import { compileProgram } from "../../engine/program.js";
import { exceedsHistoryCap } from "../../runtime/commit/history-cap.js";
import { createMachine, fullHistory, harness, historyProblems, type Harness } from "./helpers.js";

/**
 * The history quota on real Redis: an endless Pass/Choice loop (issue 13 saw one
 * write 232,481 events in 40 s) fails with States.Runtime when its next transition
 * would pass the cap; the history ends with ExecutionFailed, within the cap. A small
 * cap keeps the test fast; the default is AWS's 25,000.
 */
const CAP = 200;
const loop = {
  StartAt: "Spin",
  States: {
    Spin: { Type: "Pass", Next: "Again" },
    Again: {
      Type: "Choice",
      Choices: [{ Variable: "$.stop", BooleanEquals: true, Next: "Done" }],
      Default: "Spin",
    },
    Done: { Type: "Succeed" },
  },
};
const mapLoop = {
  StartAt: "Each",
  States: {
    Each: {
      Type: "Map",
      ItemsPath: "$.items",
      ItemProcessor: loop,
      Catch: [{ ErrorEquals: ["States.ALL"], Next: "Caught" }],
      End: true,
    },
    Caught: { Type: "Succeed" },
  },
};

let h: Harness;
beforeEach(async () => {
  h = await harness();
  await h.startWorker({ maxHistoryEvents: CAP });
});
afterEach(async () => {
  await h.close();
});

describe("history cap", () => {
  it("an endless Pass/Choice loop fails with States.Runtime at the cap", async () => {
    await createMachine(h.runtime, "spin", loop);
    const { executionId } = await h.runtime.startExecution("spin", { input: { stop: false } });
    const record = await h.runtime.waitForExecution(executionId, 10_000);
    expect(record).toMatchObject({ status: "FAILED", error: "States.Runtime" });
    expect(record.cause).toMatch(/would pass the limit of 200 \(STEPWISE_MAX_HISTORY_EVENTS/);
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history.length).toBeLessThanOrEqual(CAP);
    expect(history.length).toBeGreaterThan(CAP - 5);
    expect(history.at(-1)!.type).toBe("ExecutionFailed");
    // The replaced transition is in the journal, so replay reaches the same end.
    const { history: replayed } = replay(
      compileProgram((await h.runtime.getStateMachine("spin")).definition),
      {
        executionId,
        name: record.name,
        startTime: record.startedAt,
        input: record.input,
        stateMachineId: "arn:aws:states:local:000000000000:stateMachine:spin",
        stateMachineName: "spin",
        seed: record.name,
      },
      await h.runtime.journal(executionId),
    );
    expect(replayed).toEqual(history);
  });

  it("a loop inside a Map iteration fails the whole execution: no Catch matches it", async () => {
    await createMachine(h.runtime, "map-spin", mapLoop);
    const { executionId } = await h.runtime.startExecution("map-spin", {
      input: { items: [{ stop: false }, { stop: false }] },
    });
    const record = await h.runtime.waitForExecution(executionId, 10_000);
    expect(record).toMatchObject({ status: "FAILED", error: "States.Runtime" });
    expect(record.cause).toMatch(/would pass the limit of 200/);
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    // Children already running may each end with a few events past the cap.
    expect(history.length).toBeLessThanOrEqual(CAP + 10);
  });

  it("a last event that ends the execution may be the cap-th", () => {
    const ev = (type: string) => ({ id: 0, previousEventId: 0, timestamp: "", type }) as never;
    expect(exceedsHistoryCap(198, [ev("PassStateEntered")], 200)).toBe(false);
    expect(exceedsHistoryCap(199, [ev("PassStateEntered")], 200)).toBe(true);
    expect(exceedsHistoryCap(198, [ev("SucceedStateExited"), ev("ExecutionSucceeded")], 200)).toBe(
      false,
    );
    expect(exceedsHistoryCap(199, [ev("SucceedStateExited"), ev("ExecutionSucceeded")], 200)).toBe(
      true,
    );
  });
});
