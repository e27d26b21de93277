import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shortId } from "../../runtime/store/ids.js";
import { createMachine, harness, type Harness, ONE_SHARD } from "./helpers.js";

/**
 * What an execution waits on, as `GET /v1/executions/{id}` shows it. A parked
 * task's record keeps only its token, and its time only when that is not its
 * state's entry (runtime/commit/effects.ts), so the state, its Resource and most times
 * come from the run and the definition, also inside a Map.
 */
let h: Harness;
let redis: Redis;
beforeAll(async () => {
  h = await harness(ONE_SHARD);
  redis = new Redis(h.redisUrl);
});
afterAll(async () => {
  redis.disconnect();
  await h.close();
});

async function pending(executionId: string, count: number) {
  for (let i = 0; i < 300; i++) {
    const tasks = await h.runtime.pendingTasks(executionId);
    if (tasks.length >= count) return tasks;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`fewer than ${count} pending tasks`);
}

/** The timestamp of the execution's last TaskScheduled event. */
async function scheduledAt(executionId: string): Promise<string> {
  const { items } = await h.runtime.getHistory(executionId, { limit: 1000 });
  return items.filter((e) => e.type === "TaskScheduled").at(-1)!.timestamp;
}

describe("pending tasks of parked runs", () => {
  it("show when a Retry's later attempt was scheduled, which its record keeps", async () => {
    await createMachine(h.runtime, "parked-retry", {
      StartAt: "Hold",
      States: {
        Hold: {
          Type: "Task",
          Resource: "stepwise:waitForTaskToken",
          Parameters: { "token.$": "$$.Task.Token" },
          TimeoutSeconds: 1,
          Retry: [{ ErrorEquals: ["States.Timeout"], IntervalSeconds: 1, MaxAttempts: 1 }],
          End: true,
        },
      },
    });
    await h.startWorker();
    const { executionId } = await h.runtime.startExecution("parked-retry", {});
    const [first] = await pending(executionId, 1);
    let second = first!;
    for (let i = 0; i < 300 && second.taskToken === first!.taskToken; i++) {
      await new Promise((r) => setTimeout(r, 20));
      second = (await h.runtime.pendingTasks(executionId))[0] ?? second;
    }
    expect(second.taskToken).not.toBe(first!.taskToken);
    expect(second.scheduledAt).toBe(await scheduledAt(executionId));
    expect(Date.parse(second.scheduledAt)).toBeGreaterThanOrEqual(
      Date.parse(first!.scheduledAt) + 2000,
    );
    const taskId = await redis.hget(h.runtime.keys.tokens, second.taskToken!);
    const stored = JSON.parse((await redis.hget(h.runtime.keys.tasks, taskId!))!);
    expect(stored).toEqual({
      mode: "park",
      token: second.taskToken,
      at: Date.parse(second.scheduledAt),
    });
    await h.runtime.sendTaskSuccess(second.taskToken!, { ok: true });
    expect((await h.runtime.waitForExecution(executionId, 10_000)).status).toBe("SUCCEEDED");
  });

  it("name the state and its Resource, at the top level and in Map iterations", async () => {
    await createMachine(h.runtime, "parked-map", {
      StartAt: "Top",
      States: {
        Top: {
          Type: "Task",
          Resource: "arn:aws:states:::stepwise:waitForTaskToken",
          Parameters: { "token.$": "$$.Task.Token" },
          ResultPath: null,
          Next: "Each",
        },
        Each: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemProcessor: {
            StartAt: "Hold",
            States: {
              Hold: {
                Type: "Task",
                Resource: "stepwise:waitForTaskToken",
                Parameters: { "token.$": "$$.Task.Token" },
                End: true,
              },
            },
          },
          End: true,
        },
      },
    });
    await h.startWorker();
    const { executionId } = await h.runtime.startExecution("parked-map", {
      input: { items: [1, 2, 3] },
    });
    const [top] = await pending(executionId, 1);
    expect(top).toMatchObject({
      stateName: "Top",
      resource: "arn:aws:states:::stepwise:waitForTaskToken",
    });
    expect(top!.scheduledAt).toBe(await scheduledAt(executionId));
    // The stored record holds no name, resource or time of its own (a first attempt
    // is scheduled when its state is entered, which the run state keeps).
    const taskId = await redis.hget(h.runtime.keys.tokens, top!.taskToken!);
    const stored = JSON.parse((await redis.hget(h.runtime.keys.tasks, taskId!))!);
    expect(stored).toEqual({ mode: "park", token: top!.taskToken });
    expect(shortId(executionId)).toBe(taskId!.split("#")[0]);

    await h.runtime.sendTaskSuccess(top!.taskToken!, {});
    let inMap = await pending(executionId, 3);
    for (let i = 0; i < 300 && inMap.some((t) => t.stateName === "Top"); i++) {
      await new Promise((r) => setTimeout(r, 20));
      inMap = await h.runtime.pendingTasks(executionId);
    }
    expect(inMap).toHaveLength(3);
    for (const task of inMap) {
      expect(task).toMatchObject({ stateName: "Hold", resource: "stepwise:waitForTaskToken" });
    }
    for (const task of inMap) await h.runtime.sendTaskSuccess(task.taskToken!, { ok: true });
    const done = await h.runtime.waitForExecution(executionId, 20_000);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output).toEqual([{ ok: true }, { ok: true }, { ok: true }]);
  });

  it("of a Distributed Map's items are their child executions', not the parent's", async () => {
    await createMachine(h.runtime, "parked-distributed", {
      StartAt: "Each",
      States: {
        Each: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemProcessor: {
            ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
            StartAt: "Hold",
            States: {
              Hold: {
                Type: "Task",
                Resource: "stepwise:waitForTaskToken",
                Parameters: { "token.$": "$$.Task.Token" },
                End: true,
              },
            },
          },
          End: true,
        },
      },
    });
    await h.startWorker();
    const { executionId } = await h.runtime.startExecution("parked-distributed", {
      input: { items: [1, 2] },
    });
    const children = async () => {
      const [mapRun] = await h.runtime.mapRuns.list(shortId(executionId));
      return mapRun ? await h.runtime.mapRuns.children(mapRun) : [];
    };
    let listed = await children().catch(() => []);
    for (let i = 0; i < 300 && listed.length < 2; i++) {
      await new Promise((r) => setTimeout(r, 20));
      listed = await children().catch(() => []);
    }
    expect(listed).toHaveLength(2);
    const tasks = await Promise.all(listed.map((c) => pending(c.executionId, 1)));
    for (const [task] of tasks) expect(task).toMatchObject({ stateName: "Hold" });
    // The parent waits on its Map Run, not on tasks of its own.
    expect(await h.runtime.pendingTasks(executionId)).toEqual([]);
    for (const [task] of tasks) await h.runtime.sendTaskSuccess(task!.taskToken!, { ok: true });
    const done = await h.runtime.waitForExecution(executionId, 20_000);
    expect(done.output).toEqual([{ ok: true }, { ok: true }]);
  });
});
