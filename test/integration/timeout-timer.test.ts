import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createMachine, harness, ONE_SHARD, REDIS_URL, type Harness } from "./helpers.js";

/**
 * An execution's TimeoutSeconds is one schedule member (`t:<exec>#timeout`) while it
 * runs, and its end drops it; an execution whose definition has none never had one,
 * and its end does not look for it (runtime/commit/effects.ts `noTimeout`).
 */
let h: Harness;
let redis: Redis;
beforeAll(async () => {
  h = await harness(ONE_SHARD);
  redis = new Redis(REDIS_URL);
  await h.startWorker();
});
afterAll(async () => {
  redis.disconnect();
  await h.close();
});

const members = async (pattern: string) =>
  (await redis.zrange(h.runtime.keys.schedule, "0", "-1")).filter((m) => m.includes(pattern));

describe("the execution timeout timer", () => {
  it("is armed only with TimeoutSeconds, and gone with the end either way", async () => {
    const states = { W: { Type: "Wait", Seconds: 1, End: true } } as const;
    await createMachine(h.runtime, "timed", { TimeoutSeconds: 60, StartAt: "W", States: states });
    await createMachine(h.runtime, "untimed", { StartAt: "W", States: states });
    const timed = await h.runtime.startExecution("timed", { name: "a" });
    const untimed = await h.runtime.startExecution("untimed", { name: "b" });
    expect(await members("timed:a#timeout")).toHaveLength(1);
    expect(await members("untimed:b#timeout")).toHaveLength(0);
    for (const { executionId } of [timed, untimed]) {
      expect((await h.runtime.waitForExecution(executionId, 10_000)).status).toBe("SUCCEEDED");
    }
    expect(await members("#timeout")).toEqual([]);
    expect(await redis.hget(h.runtime.keys.stats, "timers")).toBe("0");
  });
});
