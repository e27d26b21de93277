import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedisRuntime, type RedisRuntime } from "../../runtime/runtime.js";
import { tickExecutionName } from "../../runtime/triggers/schedules/schedule-store.js";
import { testPrefix } from "../e2e/processes.js";
import { deleteKeys, REDIS_URL } from "../e2e/stack.js";

/**
 * The firing of a schedule on real Redis, with the clock handed in: overlap
 * policies and the catch-up window as they act on real executions, minutes of
 * ticks in milliseconds. No worker runs, so an execution started stays RUNNING
 * (the "long run" a tick overlaps) until the test stops it.
 */
let runtime: RedisRuntime;
let prefix: string;
const MINUTE = 60_000;
/** The first tick: a whole minute ahead, so every schedule here starts on it. */
const T0 = Math.ceil(Date.now() / MINUTE) * MINUTE + MINUTE;

beforeAll(async () => {
  prefix = testPrefix("schedule-firing");
  runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
  await runtime.createStateMachine("long", {
    StartAt: "W",
    States: { W: { Type: "Wait", Seconds: 3600, End: true } },
  });
});

afterAll(async () => {
  await runtime?.close();
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  await deleteKeys(redis, prefix);
  redis.disconnect();
});

async function every(name: string, extra: Record<string, unknown> = {}): Promise<void> {
  await runtime.triggers.schedules.create(name, {
    target: { stateMachine: "long" },
    scheduleExpression: "rate(1 minute)",
    startDate: new Date(T0).toISOString(),
    ...extra,
  });
}

const idOf = (schedule: string, tick: number) =>
  `arn:aws:states:us-east-1:123456789012:execution:long:${tickExecutionName(schedule, tick)}`;
const status = async (schedule: string, tick: number) =>
  (await runtime.describeExecution(idOf(schedule, tick))).status;
const fire = (name: string, at: number) => runtime.triggers.firing.fire(name, at);

describe("overlap policies on a rate(1 minute) schedule overlapping a long run", () => {
  it("SKIP records the overlapping tick as skipped", async () => {
    await every("skip", { overlapPolicy: "SKIP" });
    await fire("skip", T0 + 1000);
    expect(await status("skip", T0)).toBe("RUNNING");
    await fire("skip", T0 + MINUTE + 1000);
    const schedule = await runtime.triggers.schedules.get("skip");
    expect(schedule.skipped).toEqual([
      { tick: new Date(T0 + MINUTE).toISOString(), reason: "overlap" },
    ]);
    expect(schedule.lastExecution).toBe(idOf("skip", T0));
    expect(schedule.nextTick).toBe(new Date(T0 + 2 * MINUTE).toISOString());
    await expect(runtime.describeExecution(idOf("skip", T0 + MINUTE))).rejects.toThrow();
  });

  it("BUFFER_ONE starts the overlapping tick once the running one ended", async () => {
    await every("buffer", { overlapPolicy: "BUFFER_ONE" });
    await fire("buffer", T0 + 1000);
    await fire("buffer", T0 + MINUTE + 1000);
    expect((await runtime.triggers.schedules.get("buffer")).bufferedTick).toBe(
      new Date(T0 + MINUTE).toISOString(),
    );
    // A second overlapping tick while one is buffered is skipped.
    await fire("buffer", T0 + 2 * MINUTE + 1000);
    expect((await runtime.triggers.schedules.get("buffer")).skipped).toEqual([
      { tick: new Date(T0 + 2 * MINUTE).toISOString(), reason: "overlap" },
    ]);
    await runtime.stopExecution(idOf("buffer", T0));
    await fire("buffer", T0 + 2 * MINUTE + 2000);
    expect(await status("buffer", T0 + MINUTE)).toBe("RUNNING");
    const schedule = await runtime.triggers.schedules.get("buffer");
    expect(schedule.bufferedTick).toBeUndefined();
    expect(schedule.lastExecution).toBe(idOf("buffer", T0 + MINUTE));
  });

  it("ALLOW_ALL starts it beside the running one", async () => {
    await every("all", { overlapPolicy: "ALLOW_ALL" });
    await fire("all", T0 + 1000);
    await fire("all", T0 + MINUTE + 1000);
    expect(await status("all", T0)).toBe("RUNNING");
    expect(await status("all", T0 + MINUTE)).toBe("RUNNING");
  });

  it("CANCEL_OTHER stops the running one, then starts the tick", async () => {
    await every("cancel", { overlapPolicy: "CANCEL_OTHER" });
    await fire("cancel", T0 + 1000);
    await fire("cancel", T0 + MINUTE + 1000);
    const stopped = await runtime.describeExecution(idOf("cancel", T0));
    expect(stopped).toMatchObject({ status: "ABORTED", error: "Stepwise.ScheduleOverlap" });
    expect(await status("cancel", T0 + MINUTE)).toBe("RUNNING");
  });
});

describe("catch-up window", () => {
  it("starts the missed ticks within the window and records the older ones as skipped", async () => {
    await every("catchup", { overlapPolicy: "ALLOW_ALL", catchUpWindowSeconds: 120 });
    // Ten minutes with no worker: ticks T0 … T0+10 min are due at once.
    await fire("catchup", T0 + 10 * MINUTE + 1000);
    const schedule = await runtime.triggers.schedules.get("catchup");
    expect(schedule.skippedCount).toBe(9);
    expect(schedule.skipped.every((s) => s.reason === "missed")).toBe(true);
    expect(await status("catchup", T0 + 9 * MINUTE)).toBe("RUNNING");
    expect(await status("catchup", T0 + 10 * MINUTE)).toBe("RUNNING");
    await expect(runtime.describeExecution(idOf("catchup", T0 + 8 * MINUTE))).rejects.toThrow();
    expect(schedule.nextTick).toBe(new Date(T0 + 11 * MINUTE).toISOString());
  });

  it("firing the same tick twice (two workers, a restart) starts nothing twice", async () => {
    await every("twice", { overlapPolicy: "ALLOW_ALL" });
    const name = "twice";
    const first = await runtime.triggers.schedules.startTick(
      (await runtime.triggers.schedules.read(name)).definition,
      T0,
    );
    // A worker died after starting T0, before recording it: the next firing finds it.
    await fire(name, T0 + 1000);
    const schedule = await runtime.triggers.schedules.get(name);
    expect(first.created).toBe(true);
    expect(schedule.lastExecution).toBe(first.executionId);
    const listed = await runtime.listExecutions({ stateMachine: "long", limit: 1000 });
    expect(listed.items.filter((e) => e.executionId.includes(":twice-"))).toHaveLength(1);
  });
});
