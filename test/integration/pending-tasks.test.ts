import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shortId } from "../../runtime/ids.js";
import { createMachine, harness, type Harness, ONE_SHARD } from "./helpers.js";

/**
 * What an execution waits on, as `GET /v1/executions/{id}` shows it. A parked
 * task's record keeps only its token and time (runtime/effects.ts), so the state
 * and its Resource come from the run and the definition, also inside a Map.
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

describe("pending tasks of parked runs", () => {
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
    expect(Date.parse(top!.scheduledAt)).toBeGreaterThan(0);
    // The stored record holds no name or resource of its own.
    const taskId = await redis.hget(h.runtime.keys.tokens, top!.taskToken!);
    const stored = JSON.parse((await redis.hget(h.runtime.keys.tasks, taskId!))!);
    expect(stored).toEqual({ mode: "park", token: top!.taskToken, at: expect.any(Number) });
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
});
