import { STATE_MACHINE_ARN_PREFIX } from "../../runtime/store/ids.js";
import { replay } from "../../engine/replay.js";
import { compileProgram } from "../../engine/program.js";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { createMachine, fullHistory, harness, historyProblems, type Harness } from "./helpers.js";

let h: Harness;
beforeEach(async () => {
  h = await harness();
  await h.startWorker();
});
afterEach(async () => {
  await h.close();
});

/** Polls the history until a TaskScheduled shows up, returns its parameters. */
async function scheduledParameters(
  h: Harness,
  executionId: string,
): Promise<Record<string, unknown>> {
  for (let i = 0; i < 200; i++) {
    const events = await fullHistory(h.runtime, executionId);
    const scheduled = events.find((e) => e.type === "TaskScheduled");
    if (scheduled)
      return JSON.parse(String(scheduled.taskScheduledEventDetails!.parameters)) as Record<
        string,
        unknown
      >;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error("no TaskScheduled");
}

describe("task tokens, activities, stop and timeouts", () => {
  it("parks on an approval token, accepts one answer, refuses late/forged ones, records the caller", async () => {
    await createMachine(h.runtime, "approve", {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "arn:aws:states:::stepwise:waitForTaskToken",
          Parameters: { "token.$": "$$.Task.Token", "who.$": "$.who" },
          End: true,
        },
      },
    });
    const { executionId } = await h.runtime.startExecution("approve", { input: { who: "ann" } });
    const { token } = (await scheduledParameters(h, executionId)) as { token: string };
    expect(token).toMatch(/^[A-Za-z0-9_-]{22,}$/);
    await h.runtime.sendTaskHeartbeat(token, { name: "ui" });
    await h.runtime.sendTaskSuccess(token, { approved: true }, { name: "alice" });
    const record = await h.runtime.waitForExecution(executionId, 5_000);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output).toEqual({ approved: true });
    await expect(h.runtime.sendTaskSuccess(token, {}, { name: "bob" })).rejects.toMatchObject({
      code: "TaskDoesNotExist",
    });
    await expect(h.runtime.sendTaskFailure("A".repeat(22))).rejects.toMatchObject({
      code: "InvalidToken",
    });
    await expect(h.runtime.sendTaskFailure("../etc")).rejects.toMatchObject({
      code: "InvalidToken",
    });
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    const succeeded = history.find((e) => e.type === "TaskSucceeded")!;
    expect(succeeded.taskSucceededEventDetails!.callerName).toBe("alice");
    // The caller travels in the event, so the journal replays to the very same history.
    const described = await h.runtime.describeExecution(executionId);
    const name = executionId.split(":").at(-1)!;
    const { history: replayed } = replay(
      compileProgram((await h.runtime.getStateMachine("approve")).definition),
      {
        executionId,
        name,
        startTime: described.startedAt,
        input: described.input,
        stateMachineId: `${STATE_MACHINE_ARN_PREFIX}approve`,
        stateMachineName: "approve",
        seed: name,
      },
      await h.runtime.journal(executionId),
    );
    expect(JSON.parse(JSON.stringify(replayed))).toEqual(history);
  });

  it("serves activity tasks to a polling worker and fails them through the token", async () => {
    await createMachine(h.runtime, "act", {
      StartAt: "Work",
      States: {
        Work: {
          Type: "Task",
          Resource: "arn:aws:states:us-east-1:123456789012:activity:crunch",
          Catch: [{ ErrorEquals: ["Boom"], Next: "Caught" }],
          End: true,
        },
        Caught: { Type: "Pass", Result: "caught", End: true },
      },
    });
    const { executionId } = await h.runtime.startExecution("act", { input: { v: 7 } });
    const task = await h.runtime.getActivityTask("crunch", 5, "w1");
    expect(task?.input).toEqual({ v: 7 });
    expect(await h.runtime.getActivityTask("crunch", 0)).toBeNull();
    await h.runtime.sendTaskFailure(task!.taskToken, "Boom", "it broke");
    const record = await h.runtime.waitForExecution(executionId, 5_000);
    expect(record).toMatchObject({ status: "SUCCEEDED", output: "caught" });
  });

  it("times a task out by its heartbeat and refuses the late answer", async () => {
    await createMachine(h.runtime, "hb", {
      StartAt: "Wait",
      States: {
        Wait: {
          Type: "Task",
          Resource: "arn:aws:states:::stepwise:waitForTaskToken",
          Parameters: { "token.$": "$$.Task.Token" },
          HeartbeatSeconds: 1,
          End: true,
        },
      },
    });
    const { executionId } = await h.runtime.startExecution("hb", {});
    const { token } = (await scheduledParameters(h, executionId)) as { token: string };
    const record = await h.runtime.waitForExecution(executionId, 5_000);
    // AWS records a missed heartbeat as States.Timeout (task-cases: test_heartbeat_no_timeout).
    expect(record).toMatchObject({ status: "FAILED", error: "States.Timeout" });
    await expect(h.runtime.sendTaskSuccess(token, {})).rejects.toMatchObject({
      code: "TaskTimedOut",
    });
  });

  it("stops an execution (ABORTED), cancelling its children's waits and timers", async () => {
    await createMachine(h.runtime, "long", {
      StartAt: "P",
      States: {
        P: {
          Type: "Parallel",
          Branches: [
            { StartAt: "W", States: { W: { Type: "Wait", Seconds: 31536000, End: true } } },
            {
              StartAt: "T",
              States: {
                T: {
                  Type: "Task",
                  Resource: "arn:aws:states:::stepwise:waitForTaskToken",
                  End: true,
                },
              },
            },
          ],
          End: true,
        },
      },
    });
    const { executionId } = await h.runtime.startExecution("long", {});
    await new Promise((r) => setTimeout(r, 300));
    const record = await h.runtime.stopExecution(executionId, {
      error: "Cancelled",
      cause: "by test",
      caller: { name: "ops" },
    });
    expect(record).toMatchObject({ status: "ABORTED", error: "Cancelled", cause: "by test" });
    await expect(h.runtime.stopExecution(executionId)).rejects.toMatchObject({
      code: "ExecutionNotRunning",
    });
    await new Promise((r) => setTimeout(r, 300));
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history.some((e) => e.type === "ExecutionAborted")).toBe(true);
    // Nothing of the execution is left scheduled: no timer, no lease.
    const redis = (h.runtime as unknown as { client: { redis: import("ioredis").Redis } }).client
      .redis;
    expect(await redis.zrange(h.runtime.keys.schedule, "0", "-1")).toEqual([]);
    expect(await redis.hlen(h.runtime.keys.tasks)).toBe(0);
  });

  it("times an execution out (TIMED_OUT, States.Timeout)", async () => {
    await createMachine(h.runtime, "slow", {
      TimeoutSeconds: 1,
      StartAt: "W",
      States: { W: { Type: "Wait", Seconds: 60, End: true } },
    });
    const { executionId } = await h.runtime.startExecution("slow", {});
    const record = await h.runtime.waitForExecution(executionId, 5_000);
    expect(record).toMatchObject({ status: "TIMED_OUT", error: "States.Timeout" });
    const history = await fullHistory(h.runtime, executionId);
    expect(history.at(-1)!.type).toBe("ExecutionTimedOut");
  });

  it("lists executions newest first and pages history", async () => {
    await createMachine(h.runtime, "l", {
      StartAt: "A",
      States: { A: { Type: "Pass", End: true } },
    });
    for (let i = 0; i < 3; i++) await h.runtime.startExecution("l", { name: `e${i}` });
    const page = await h.runtime.listExecutions({ stateMachine: "l", limit: 2 });
    expect(page.items.map((e) => e.name)).toEqual(["e2", "e1"]);
    const rest = await h.runtime.listExecutions({
      stateMachine: "l",
      limit: 2,
      cursor: page.nextCursor!,
    });
    expect(rest.items.map((e) => e.name)).toEqual(["e0"]);
    const id = page.items[0]!.executionId;
    await h.runtime.waitForExecution(id, 5_000);
    const first = await h.runtime.getHistory(id, { limit: 2 });
    const second = await h.runtime.getHistory(id, { limit: 2, cursor: first.nextCursor! });
    expect([...first.items, ...second.items].map((e) => e.id)).toEqual([1, 2, 3, 4]);
    const reversed = await h.runtime.getHistory(id, { reverse: true, limit: 10 });
    expect(reversed.items.map((e) => e.id)).toEqual([4, 3, 2, 1]);
  });
});
