import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "./client.js";
import {
  exited,
  logLine,
  logLines,
  spawnBin,
  testPrefix,
  until,
  type Spawned,
} from "./processes.js";
import { deleteKeys, REDIS_URL } from "./stack.js";

/**
 * Exactly one execution per tick with two workers, one of them killed at the tick:
 * the API alone (`stepwise serve --no-worker`) and two `stepwise worker` processes,
 * both armed with the crash point `afterTickStarted` (STEPWISE_CRASH_AT), which
 * SIGKILLs the process that created a tick's execution before it records the
 * tick. The survivor fires the same tick once the dead one's claim runs out,
 * finds the execution by its name, and records it: one execution, one death.
 */
const ADMIN = "admin-secret-0123456789abcdef";
let api: Spawned;
let workers: Spawned[] = [];
let client: Client;
let env: Record<string, string>;

beforeAll(async () => {
  env = {
    REDIS_URL,
    STEPWISE_PREFIX: testPrefix("triggers-workers"),
    // A killed worker's jobs come back in about a second.
    STEPWISE_LEASE_MS: "1000",
    STEPWISE_LOCK_MS: "1500",
    STEPWISE_STALLED_MS: "500",
  };
  api = spawnBin(["serve", "--no-worker"], {
    env: { ...env, PORT: "0", HOST: "127.0.0.1", STEPWISE_API_KEYS: `ops:admin:${ADMIN}` },
  });
  client = new Client(String((await logLine(api, /ready: API /)).api), ADMIN);
  workers = [0, 1].map(() =>
    spawnBin(["worker"], { env: { ...env, STEPWISE_CRASH_AT: "afterTickStarted" } }),
  );
  await Promise.all(workers.map((worker) => logLine(worker, /worker ready/)));
});

afterAll(async () => {
  const running = workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null);
  for (const worker of running) worker.child.kill("SIGTERM");
  await Promise.all(running.map((worker) => exited(worker.child).catch(() => null)));
  let code: number | null = 0;
  if (api) {
    api.child.kill("SIGTERM");
    code = await exited(api.child);
  }
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  await deleteKeys(redis, env.STEPWISE_PREFIX!);
  redis.disconnect();
  const errors = api ? logLines(api.output()).filter((line) => line.level >= 50) : [];
  expect({ code, errors }, api?.output()).toEqual({ code: 0, errors: [] });
});

describe("an at() tick with two workers, one killed at the tick", () => {
  it("starts exactly one execution and is recorded by the survivor", async () => {
    await client.post("/v1/state-machines", {
      name: "job",
      definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
    });
    const tick = Math.ceil((Date.now() + 3000) / 1000) * 1000;
    const created = await client.post("/v1/schedules", {
      name: "once",
      target: { stateMachine: "job" },
      scheduleExpression: `at(${new Date(tick).toISOString().slice(0, 19)})`,
    });
    expect(created.status).toBe(201);
    // One worker created the execution and died before recording the tick.
    const dead = await until(async () => {
      const gone = workers.filter((w) => w.child.exitCode !== null || w.child.signalCode !== null);
      return gone.length > 0 ? gone : undefined;
    });
    expect(dead).toHaveLength(1);
    expect(dead[0]!.child.signalCode).toBe("SIGKILL");
    // The survivor fired the same tick (after the claim ran out) and recorded it.
    const schedule = await until(async () => {
      const s = (await client.get("/v1/schedules/once")).body;
      return s.lastExecution ? s : undefined;
    });
    expect(schedule.nextTick).toBeUndefined();
    const name = `once-${new Date(tick).toISOString().replace(/[-:]/g, "").slice(0, 15)}Z`;
    expect(schedule.lastExecution).toMatch(new RegExp(`:job:${name}$`));
    const record = await until(async () => {
      const r = await client.get(`/v1/executions/${encodeURIComponent(schedule.lastExecution)}`);
      return r.body.status === "SUCCEEDED" ? r.body : undefined;
    });
    expect(record.input).toEqual({ scheduledTime: new Date(tick).toISOString() });
    const all = (await client.get("/v1/executions?stateMachine=job")).body.items;
    expect(all).toHaveLength(1);
    // The survivor is still up: it found the execution, it did not create it.
    expect(
      workers.filter((w) => w.child.exitCode === null && w.child.signalCode === null),
    ).toHaveLength(1);
  });
});
