import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import { shortId, taskJobId } from "../../runtime/store/ids.js";
import { taskJob } from "../../runtime/store/job-ids.js";
import { JobQueues } from "../../runtime/worker/queues.js";
import { RedisClient } from "../../runtime/store/redis.js";
import {
  taskCallClaim,
  type TaskCallClaimArgs,
} from "../../runtime/store/scripts/task-call-claim.js";
import { functionRunner } from "../../task-runners/function.js";
import { createMachine, harnessPerTest, until, type Harness, ONE_SHARD } from "./helpers.js";

// Task calls (runtime/worker/task-jobs.ts, store/scripts/task-call-claim.ts): the worker whose
// commit scheduled a task calls it at once, under a claim that keeps any other
// worker or queued job from calling it at the same time.
let h: Harness;
let redis: Redis;
// Reads one shard's keys by name (helpers.ts ONE_SHARD).
harnessPerTest((fresh) => ({ h, redis } = fresh), ONE_SHARD);

/** The tasks queue's job of a task (BullMQ key of job id `taskJobId`). */
const jobKey = (task: string) => `${h.runtime.keys.bullPrefix}:tasks:${taskJobId(task)}`;

describe("task calls", () => {
  it("are called by the committing worker, never twice at once, even when their job is queued again mid-call", async () => {
    const calls: string[] = [];
    let finish: (() => void) | undefined;
    await h.startWorker({
      taskRunners: [
        functionRunner({
          slow: async (_input, request) => {
            calls.push(request.taskId);
            await new Promise<void>((resolve) => (finish = resolve));
            return { done: true } as Json;
          },
        }),
      ],
    });
    await createMachine(h.runtime, "calls", {
      StartAt: "Slow",
      States: { Slow: { Type: "Task", Resource: "function:slow", End: true } },
    });
    const { executionId } = await h.runtime.startExecution("calls", { input: {}, name: "one" });
    await until(async () => calls.length === 1);
    const task = shortId(calls[0]!);
    // Called in the worker, not through the tasks queue.
    expect(await redis.exists(jobKey(task))).toBe(0);
    expect(await redis.get(h.runtime.keys.taskClaim(task))).toMatch(/:\d+:/);

    // A stale commit's follow-ups, re-enqueued mid-call: the job finds the call claimed.
    const queues = new JobQueues(redis, h.runtime.keys);
    try {
      await queues.ensure(taskJob(task));
      await until(async () => (await redis.exists(jobKey(task))) === 0);
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(calls).toHaveLength(1);
    } finally {
      await queues.close();
    }
    finish!();
    const record = await h.runtime.waitForExecution(executionId, 10_000);
    expect(record).toMatchObject({ status: "SUCCEEDED", output: { done: true } });
    expect(calls).toHaveLength(1);
    // The delivery dropped the claim with the task.
    expect(await redis.exists(h.runtime.keys.taskClaim(task))).toBe(0);
  });
});

describe("taskCallClaim", () => {
  it("claims once, with the execution's fields asked for; renews and releases only for its owner, and says when the task is gone", async () => {
    const keys = h.runtime.keys;
    const task = "m:e#1";
    const claimKeys = {
      tasks: keys.tasks,
      claim: keys.taskClaim(task),
      schedule: keys.schedule,
      execution: keys.execution("m:e"),
    };
    const client = new RedisClient(h.redisUrl);
    try {
      const call = (args: TaskCallClaimArgs) => client.call(taskCallClaim, claimKeys, args);
      const claim = (owner: string) =>
        call({
          action: "claim",
          task,
          owner,
          now: 1_000,
          leaseMs: 5_000,
          read: ["bg", "mc", "tr"],
        });
      expect(await claim("a")).toEqual({ kind: "gone" });
      await redis.hset(keys.tasks, task, '{"mode":"call"}');
      await redis.zadd(keys.schedule, 2_000, `k:${task}`);
      await redis.hset(keys.execution("m:e"), "mc", "3", "tr", "0af7651916cd43dd8448eb211c80319c");
      // The record and the execution's fields in one round trip (false: not set).
      expect(await claim("a")).toEqual({
        kind: "claimed",
        record: '{"mode":"call"}',
        fields: [false, "3", "0af7651916cd43dd8448eb211c80319c"],
      });
      // The task's lease moved with the claim.
      expect(await redis.zscore(keys.schedule, `k:${task}`)).toBe("6000");
      expect(await claim("b")).toEqual({ kind: "held" });
      // Another owner neither renews nor releases it.
      await call({ action: "renew", task, owner: "b", now: 9_000, leaseMs: 5_000 });
      expect(await redis.zscore(keys.schedule, `k:${task}`)).toBe("6000");
      await call({ action: "release", task, owner: "b" });
      expect(await redis.get(keys.taskClaim(task))).toBe("a");
      await call({ action: "renew", task, owner: "a", now: 9_000, leaseMs: 5_000 });
      expect(await redis.zscore(keys.schedule, `k:${task}`)).toBe("14000");
      expect(await redis.pttl(keys.taskClaim(task))).toBeGreaterThan(4_000);
      await call({ action: "release", task, owner: "a" });
      expect(await claim("b")).toMatchObject({ kind: "claimed" });
    } finally {
      await client.close();
    }
  });
});
