import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { until } from "./processes.js";
import { startStack, type Stack } from "./stack.js";

/**
 * A schedule's catch-up through the binary, without waiting minutes: a StartDate a
 * few minutes in the past puts the ticks since then (within the catch-up window) due
 * at once, as ticks missed while the service was down are. So a `rate(1 minute)` with
 * SKIP overlapping a long run is seen in seconds: the first tick starts the long run,
 * the others are recorded as skipped. And each tick's execution is dated at its tick:
 * `$$.Execution.StartTime` and `scheduledTime` say which period the run covers,
 * however late it was started.
 */
let stack: Stack;
const enc = encodeURIComponent;
const MINUTE = 60_000;

beforeAll(async () => {
  stack = await startStack();
  for (const [name, definition] of Object.entries({
    long: { StartAt: "W", States: { W: { Type: "Wait", Seconds: 3600, End: true } } },
    stamp: {
      StartAt: "P",
      States: {
        P: {
          Type: "Pass",
          Parameters: {
            "startTime.$": "$$.Execution.StartTime",
            "scheduledTime.$": "$.scheduledTime",
          },
          End: true,
        },
      },
    },
  })) {
    const created = await stack.client.post("/v1/state-machines", { name, definition });
    expect(created.status).toBe(201);
  }
});

afterAll(async () => {
  await stack?.close();
});

/** A whole second `seconds` ago, as ISO 8601 (a rate counts from its StartDate). */
function secondsAgo(seconds: number): number {
  return Math.floor(Date.now() / 1000) * 1000 - seconds * 1000;
}

async function executionsOf(machine: string, schedule: string): Promise<any[]> {
  const reply = await stack.client.get(`/v1/executions?stateMachine=${machine}&limit=1000`);
  expect(reply.status).toBe(200);
  return reply.body.items.filter((e: { name: string }) => e.name.startsWith(`${schedule}-`));
}

describe("catch-up from a StartDate in the past", () => {
  it("rate(1 minute) with SKIP overlapping a long run starts one execution and skips the rest", async () => {
    // Ticks at -210 s, -150 s, -90 s and -30 s: all within the 300 s window, due at once.
    const start = secondsAgo(210);
    const ticks = [0, 1, 2, 3].map((i) => new Date(start + i * MINUTE).toISOString());
    const created = await stack.client.post("/v1/schedules", {
      name: "skipper",
      target: { stateMachine: "long" },
      scheduleExpression: "rate(1 minute)",
      startDate: new Date(start).toISOString(),
      catchUpWindowSeconds: 300,
      overlapPolicy: "SKIP",
    });
    expect(created.status).toBe(201);
    expect(created.body.nextTick).toBe(ticks[0]);
    const schedule = await until(async () => {
      const s = (await stack.client.get("/v1/schedules/skipper")).body;
      return s.lastTick === ticks[3] ? s : undefined;
    });
    expect(schedule.skippedCount).toBe(3);
    expect(schedule.skipped).toEqual(ticks.slice(1).map((tick) => ({ tick, reason: "overlap" })));
    expect(Date.parse(schedule.nextTick)).toBe(start + 4 * MINUTE);
    const started = await executionsOf("long", "skipper");
    expect(started.map((e) => e.name)).toEqual(["skipper-" + compact(ticks[0]!)]);
    expect(started[0].status).toBe("RUNNING");
    expect(schedule.lastExecution).toBe(started[0].executionId);
    // The long run is not left to the next test file's Redis.
    expect((await stack.client.call("DELETE", "/v1/schedules/skipper")).status).toBe(204);
    const stopped = await stack.client.post(
      `/v1/executions/${enc(started[0].executionId)}/stop`,
      {},
    );
    expect(stopped.status).toBe(200);
  });

  it("dates each tick's execution at its tick: $$.Execution.StartTime and scheduledTime", async () => {
    const start = secondsAgo(150);
    const ticks = [0, 1, 2].map((i) => new Date(start + i * MINUTE).toISOString());
    const created = await stack.client.post("/v1/schedules", {
      name: "stamped",
      target: { stateMachine: "stamp", input: {} },
      scheduleExpression: "rate(1 minute)",
      startDate: new Date(start).toISOString(),
      overlapPolicy: "ALLOW_ALL",
    });
    expect(created.status).toBe(201);
    const done = await until(async () => {
      const list = await executionsOf("stamp", "stamped");
      return list.length === 3 && list.every((e) => e.status === "SUCCEEDED") ? list : undefined;
    });
    // Newest first: the listing orders them by their start, the tick.
    expect(done.map((e) => e.startedAt)).toEqual([...ticks].reverse());
    for (const tick of ticks) {
      const id = done.find((e) => e.name === `stamped-${compact(tick)}`)!.executionId;
      const record = (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
      expect(record.startedAt).toBe(tick);
      expect(record.output).toEqual({ startTime: tick, scheduledTime: tick });
    }
    expect((await stack.client.call("DELETE", "/v1/schedules/stamped")).status).toBe(204);
  });
});

/** `yyyymmddThhmmssZ`: how a tick's execution is named. */
function compact(iso: string): string {
  return `${iso.replace(/[-:]/g, "").slice(0, 15)}Z`;
}
