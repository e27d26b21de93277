import { describe, expect, it } from "vitest";
import type { HistoryEvent } from "../../console/src/api/types.js";
import { deriveHistory } from "../../console/src/status/derive.js";
import { runExecution, type MockResponse } from "../../engine/drivers/memory.js";

/**
 * History → what happened to each state. The histories are real: the in-memory
 * driver runs the same `step` as the service and writes the same events.
 */

async function history(
  definition: object,
  mocks: Record<string, MockResponse[]> = {},
  input: object = {},
) {
  const result = await runExecution(definition as never, { input: input as never, mocks });
  return { events: result.history as unknown as HistoryEvent[], status: result.status };
}

const statuses = (events: HistoryEvent[]) =>
  Object.fromEntries([...deriveHistory(events).states].map(([name, s]) => [name, s.status]));

const LAMBDA = "arn:aws:lambda:us-east-1:123456789012:function:f";
const fail = (Error: string, Cause = "it broke"): MockResponse => ({ Throw: { Error, Cause } });

describe("deriveHistory", () => {
  it("tells succeeded, retried (with the count), caught and not reached apart", async () => {
    const { events } = await history(
      {
        StartAt: "Flaky",
        States: {
          Flaky: {
            Type: "Task",
            Resource: LAMBDA,
            Retry: [{ ErrorEquals: ["States.ALL"], MaxAttempts: 3, IntervalSeconds: 1 }],
            Next: "Breaks",
          },
          Breaks: {
            Type: "Task",
            Resource: LAMBDA,
            Catch: [{ ErrorEquals: ["States.ALL"], Next: "Recover" }],
            Next: "Never",
          },
          Never: { Type: "Pass", End: true },
          Recover: { Type: "Pass", End: true },
        },
      },
      {
        Flaky: [fail("E1"), fail("E2"), { Return: { ok: true } }],
        Breaks: [fail("Boom", "bad input")],
      },
    );
    const derived = deriveHistory(events);
    expect(statuses(events)).toEqual({ Flaky: "retried", Breaks: "caught", Recover: "succeeded" });
    expect(derived.states.get("Flaky")!.retries).toBe(2);
    expect(derived.states.get("Never")).toBeUndefined();
    const breaks = derived.states.get("Breaks")!.entries[0]!;
    expect(breaks).toMatchObject({ error: "Boom", cause: "bad input", retries: 0 });
    expect(JSON.parse(breaks.output!)).toEqual({ Error: "Boom", Cause: "bad input" });
    expect(derived.ended).toBe("SUCCEEDED");
    // Attempt numbers: the failures of Flaky's attempts 1 and 2, then attempt 3 succeeded.
    const flaky = derived.states.get("Flaky")!.entries[0]!;
    expect(flaky.attempt).toBe(3);
    expect(flaky.failures.map((f) => [f.attempt, f.error])).toEqual([
      [1, "E1"],
      [2, "E2"],
    ]);
    expect(flaky.exitedAt).toEqual(expect.any(String));
    // The path taken, the Catch included; the Next never followed is not in it.
    expect([...derived.taken].map((t) => t.replace("\u0000", "→")).sort()).toEqual(
      ["Breaks→Recover", "Flaky→Breaks", "Recover→^end", "^start→Flaky"].sort(),
    );
    expect(derived.current).toBeUndefined();
  });

  it("follows Parallel branches and Map iterations, and counts Map entries", async () => {
    const { events } = await history(
      {
        StartAt: "Fan",
        States: {
          Fan: {
            Type: "Parallel",
            Branches: [
              { StartAt: "Left", States: { Left: { Type: "Pass", End: true } } },
              {
                StartAt: "Right",
                States: {
                  Right: {
                    Type: "Task",
                    Resource: LAMBDA,
                    Retry: [{ ErrorEquals: ["States.ALL"], IntervalSeconds: 1 }],
                    End: true,
                  },
                },
              },
            ],
            ResultPath: null,
            Next: "Each",
          },
          Each: {
            Type: "Map",
            ItemsPath: "$.items",
            ItemProcessor: { StartAt: "Item", States: { Item: { Type: "Pass", End: true } } },
            End: true,
          },
        },
      },
      { Right: [fail("Flake"), { Return: 1 }] },
      { items: [1, 2, 3] },
    );
    const derived = deriveHistory(events);
    expect(statuses(events)).toEqual({
      Fan: "succeeded",
      Left: "succeeded",
      Right: "retried",
      Each: "succeeded",
      Item: "succeeded",
    });
    expect(derived.states.get("Item")!.entries.map((e) => e.input)).toEqual(["1", "2", "3"]);
    // Every event of a state entry maps back to it, interleaved or not.
    const rightEntry = derived.states.get("Right")!.entries[0]!.enteredEventId;
    const failed = events.find((e) => e.type === "LambdaFunctionFailed")!;
    expect(derived.entryOfEvent.get(failed.id)).toBe(rightEntry);
  });

  it("marks the state that failed the execution, and the branch cut short as aborted", async () => {
    const { events, status } = await history(
      {
        StartAt: "Fan",
        States: {
          Fan: {
            Type: "Parallel",
            Branches: [
              { StartAt: "Slow", States: { Slow: { Type: "Wait", Seconds: 60, End: true } } },
              { StartAt: "Bad", States: { Bad: { Type: "Task", Resource: LAMBDA, End: true } } },
            ],
            End: true,
          },
        },
      },
      { Bad: [fail("Fatal", "no way")] },
    );
    expect(status).toBe("FAILED");
    const derived = deriveHistory(events);
    expect(statuses(events)).toEqual({ Fan: "failed", Bad: "failed", Slow: "aborted" });
    expect(derived.states.get("Bad")!.entries[0]).toMatchObject({
      error: "Fatal",
      cause: "no way",
    });
    expect(derived.ended).toBe("FAILED");
  });

  it("shows a Fail state as failed and a running execution's current state as running", async () => {
    const { events } = await history({
      StartAt: "Go",
      States: {
        Go: { Type: "Pass", Next: "Stop" },
        Stop: { Type: "Fail", Error: "Nope", Cause: "because" },
      },
    });
    expect(statuses(events)).toEqual({ Go: "succeeded", Stop: "failed" });
    // The same history cut before the end: the execution is still in Go.
    const cut = events.slice(
      0,
      events.findIndex((e) => e.type === "PassStateExited"),
    );
    expect(statuses(cut)).toEqual({ Go: "running" });
    expect(deriveHistory(cut).ended).toBeUndefined();
  });

  it("reads nothing from an empty history", () => {
    const derived = deriveHistory([]);
    expect(derived.states.size).toBe(0);
    expect(derived.ended).toBeUndefined();
  });
});

describe("deriveHistory after a redrive", () => {
  it("keeps the failed entry failed and runs the state entered again", () => {
    const at = "2026-12-01T00:00:00.000Z";
    const e = (id: number, previousEventId: number, type: string, details: object = {}) =>
      ({ id, previousEventId, timestamp: at, type, ...details }) as unknown as HistoryEvent;
    const events = [
      e(1, 0, "ExecutionStarted", { executionStartedEventDetails: { input: "{}" } }),
      e(2, 1, "TaskStateEntered", { stateEnteredEventDetails: { name: "Charge", input: "{}" } }),
      e(3, 2, "TaskScheduled", { taskScheduledEventDetails: {} }),
      e(4, 3, "TaskFailed", { taskFailedEventDetails: { error: "Card.Declined" } }),
      e(5, 4, "ExecutionFailed", { executionFailedEventDetails: { error: "Card.Declined" } }),
      e(6, 5, "ExecutionRedriven", { executionRedrivenEventDetails: { redriveCount: 1 } }),
      e(7, 6, "TaskStateEntered", { stateEnteredEventDetails: { name: "Charge", input: "{}" } }),
      e(8, 7, "TaskScheduled", { taskScheduledEventDetails: {} }),
    ];
    const derived = deriveHistory(events);
    expect(derived.ended).toBeUndefined();
    expect(derived.entries.get(2)!.status).toBe("failed");
    expect(derived.entries.get(7)!.status).toBe("running");
    expect(derived.states.get("Charge")!.status).toBe("running");
  });
});
