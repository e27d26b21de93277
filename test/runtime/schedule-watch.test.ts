import { Redis } from "ioredis";
import { afterAll, describe, expect, it } from "vitest";
import type { RedisClient } from "../../runtime/store/redis.js";
import { ScheduleWatch } from "../../runtime/worker/scheduler.js";
import { randomPrefix, REDIS_URL } from "../integration/helpers.js";

/**
 * The schedule watch (runtime/worker/scheduler.ts) against a real Redis: how often it
 * reads the schedules' first entries while its process works and while it idles, and
 * that it wakes a waiting loop when an entry armed by someone else comes due. Polls
 * are counted, not timed: the bounds hold on a loaded machine.
 */
const redis = new Redis(REDIS_URL);
afterAll(() => redis.disconnect());

function countingClient(): { client: RedisClient; polls: () => number } {
  let polls = 0;
  const client = {
    redis: {
      zrange: (...args: Parameters<Redis["zrange"]>) => {
        polls += 1;
        return redis.zrange(...args);
      },
    },
  } as unknown as RedisClient;
  return { client, polls: () => polls };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("the schedule watch", () => {
  it("polls every timerPollMs while its process works and every 250 ms when idle", async () => {
    const { client, polls } = countingClient();
    const watch = new ScheduleWatch(client, 20);
    const schedule = `${randomPrefix()}sched`;
    const cancel = watch.onDue(schedule, () => {});
    try {
      await sleep(1_000);
      const idle = polls();
      // 1 s at 250 ms: 4 reads (a slow machine may manage fewer, never more).
      expect(idle).toBeLessThanOrEqual(5);
      expect(idle).toBeGreaterThanOrEqual(1);
      watch.busy();
      await sleep(1_000);
      // 1 s at 20 ms: up to 50 reads; many more than idle even when timers run late.
      expect(polls() - idle).toBeGreaterThanOrEqual(15);
    } finally {
      cancel();
      watch.close();
    }
  });

  it("wakes a waiting loop once an entry armed by another process is due, when idle too", async () => {
    const { client } = countingClient();
    const watch = new ScheduleWatch(client, 20);
    const schedule = `${randomPrefix()}sched`;
    try {
      const woken = new Promise<number>((resolve) =>
        watch.onDue(schedule, () => resolve(Date.now())),
      );
      const armed = Date.now();
      await redis.zadd(schedule, armed + 100, "t:someone-elses");
      const at = await woken;
      expect(at).toBeGreaterThanOrEqual(armed + 100);
    } finally {
      watch.close();
      await redis.del(schedule);
    }
  });
});
