import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stepJobId } from "../../runtime/store/ids.js";
import { makeKeys } from "../../runtime/store/keys.js";
import { JobQueues } from "../../runtime/worker/queues.js";
import { bullConnection, RedisClient } from "../../runtime/store/redis.js";
import { Scheduler } from "../../runtime/worker/scheduler.js";
import { resolveSettings } from "../../runtime/settings.js";
import {
  createMachine,
  fullHistory,
  harness,
  REDIS_URL,
  type Harness,
  ONE_SHARD,
} from "./helpers.js";

/**
 * Timers due at the same instant (issue 21): the workers claim them in parallel
 * and fire what they claimed themselves (scheduler.ts). Each must fire exactly
 * once, and a fire that fails must still reach the run through its job.
 */
let h: Harness;
let redis: Redis;
beforeAll(async () => {
  // Reads one shard's keys by name (helpers.ts ONE_SHARD).
  h = await harness(ONE_SHARD);
  redis = new Redis(REDIS_URL);
});
afterAll(async () => {
  redis.disconnect();
  await h.close();
});

const nap = {
  StartAt: "W",
  States: { W: { Type: "Wait", TimestampPath: "$.at", End: true } },
};

describe("a burst of timers due at once", () => {
  it("fires each exactly once across two workers claiming in parallel", async () => {
    await createMachine(h.runtime, "nap", nap);
    // Few slots each, so both workers claim many small batches side by side.
    await h.startWorker({ concurrency: 4, fireConcurrency: 4 });
    await h.startWorker({ concurrency: 4, fireConcurrency: 4 });
    const at = new Date(Date.now() + 1500).toISOString();
    const n = 300;
    const ids = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        h.runtime
          .startExecution("nap", { name: `n${i}`, input: { at } })
          .then((r) => r.executionId),
      ),
    );
    for (const id of ids) {
      expect((await h.runtime.waitForExecution(id, 30_000)).status).toBe("SUCCEEDED");
    }
    for (const id of ids) {
      const types = (await fullHistory(h.runtime, id)).map((e) => e.type);
      expect(types.filter((t) => t === "WaitStateExited")).toHaveLength(1);
      expect(types.filter((t) => t === "ExecutionSucceeded")).toHaveLength(1);
    }
    const keys = h.runtime.keys;
    // Every timer left the schedule and every lease its claim put there was dropped.
    expect(await redis.zcard(keys.schedule)).toBe(0);
    expect(Number(await redis.hget(keys.stats, "timers"))).toBe(0);
  });

  it("hands a run whose fire failed to the queue, where a worker takes it up", async () => {
    await Promise.all(h.workers.splice(0).map((w) => w.close()));
    const worker = await h.startWorker();
    const at = new Date(Date.now() + 800).toISOString();
    const { executionId } = await h.runtime.startExecution("nap", { name: "fails", input: { at } });
    const keys = h.runtime.keys;
    for (let i = 0; i < 100 && (await redis.zcard(keys.schedule)) === 0; i++)
      await new Promise((r) => setTimeout(r, 20));
    await worker.close();
    h.workers.length = 0;
    await new Promise((r) => setTimeout(r, 900));
    const settings = resolveSettings({ redisUrl: h.redisUrl, prefix: h.prefix });
    const client = new RedisClient(h.redisUrl);
    const connection = bullConnection(h.redisUrl, "burst-test");
    const queues = new JobQueues(connection, makeKeys(h.prefix));
    const fired: string[] = [];
    const scheduler = new Scheduler(client, keys, queues, settings, () => {}, {
      fire: (run) => {
        fired.push(run);
        return Promise.reject(new Error("fire failed"));
      },
    });
    try {
      await scheduler.tick();
      await scheduler.stop();
      expect(fired).toEqual(["nap:fails"]);
      const seq = Number(await redis.hget(keys.run("nap:fails"), "q"));
      expect(await queues.steps.getJob(stepJobId("nap:fails", seq))).toBeDefined();
    } finally {
      await queues.close();
      connection.disconnect();
      await client.close();
    }
    await h.startWorker();
    expect((await h.runtime.waitForExecution(executionId, 10_000)).status).toBe("SUCCEEDED");
  });
});
