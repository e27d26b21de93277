import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ActivityWakeups } from "../../runtime/executions/activity-wakeups.js";
import { createMachine, harness, type Harness } from "./helpers.js";
import { CommandMonitor } from "./monitor.js";

/**
 * A GetActivityTask long poll waits for a task without polling Redis: the commit
 * that adds a task to an activity's list publishes it, and the waiting polls look
 * again (runtime/executions/activity-wakeups.ts). Counted with MONITOR on real Redis, on the
 * default layout of 16 shards, where a look reads 16 list lengths; polling every
 * 50 ms, as polls did, would be 320 reads a second.
 */
let h: Harness;
let monitor: CommandMonitor;
beforeAll(async () => {
  h = await harness();
  monitor = new CommandMonitor(h.redisUrl, h.prefix);
  await createMachine(h.runtime, "crunch-it", {
    StartAt: "Crunch",
    States: { Crunch: { Type: "Task", Resource: "activity:crunch", End: true } },
  });
});
afterAll(async () => {
  monitor.close();
  await h.close();
});

const lengthReads = (commands: string[][]) =>
  commands.filter((c) => c[0]?.toLowerCase() === "llen").length;

describe("activity long polls", () => {
  it("look at the lists about once a second while nothing comes", async () => {
    const { result, commands } = await monitor.commandsOf(() =>
      h.runtime.getActivityTask("crunch", 3),
    );
    expect(result).toBeNull();
    // A look at t = 0, 1, 2 and 3 s (and one more on a slow machine), 16 lengths each.
    expect(lengthReads(commands)).toBeGreaterThanOrEqual(16);
    expect(lengthReads(commands)).toBeLessThanOrEqual(5 * 16);
  });

  it("are handed the tasks added while they wait, one each, and the commit publishes each", async () => {
    await h.startWorker();
    const { result, commands } = await monitor.commandsOf(async () => {
      const polls = Array.from({ length: 3 }, () => h.runtime.getActivityTask("crunch", 20));
      await new Promise((r) => setTimeout(r, 300));
      for (const n of [1, 2, 3]) await h.runtime.startExecution("crunch-it", { input: { n } });
      return Promise.all(polls);
    });
    const inputs = result.map((task) => (task!.input as { n: number }).n);
    expect(inputs.sort()).toEqual([1, 2, 3]);
    expect(new Set(result.map((task) => task!.taskToken)).size).toBe(3);
    const published = commands.filter((c) => c[0]?.toLowerCase() === "publish");
    expect(published.filter((c) => c[1]!.endsWith("actready") && c[2] === "crunch")).toHaveLength(
      3,
    );
    for (const task of result) await h.runtime.sendTaskSuccess(task!.taskToken, { ok: true });
  });
});

describe("ActivityWakeups", () => {
  it("wakes a watch of an activity when its shard's channel names it, and only that one", async () => {
    const keys = (await h.runtime.shardLayout()).shards;
    const wakeups = new ActivityWakeups(
      { redisUrl: h.redisUrl },
      keys.map((k) => k.activityChannel),
    );
    const publisher = new Redis(h.redisUrl);
    try {
      const crunch = await wakeups.watch("crunch");
      const other = await wakeups.watch("other");
      let otherWoke = false;
      const otherSleep = other.sleep(60_000).then(() => (otherWoke = true));
      const woke = crunch.sleep(60_000);
      await publisher.publish(keys[7]!.activityChannel, "crunch");
      // Resolves on the message (the test's own timeout is far below 60 s).
      await woke;
      expect(otherWoke).toBe(false);
      crunch.close();
      expect(wakeups.size).toBe(1);
      // Closing wakes what still sleeps, and says so.
      wakeups.close();
      await otherSleep;
      expect(otherWoke).toBe(true);
      expect(other.closed()).toBe(true);
      other.close();
      expect(wakeups.size).toBe(0);
    } finally {
      publisher.disconnect();
      wakeups.close();
    }
  }, 20_000);
});
