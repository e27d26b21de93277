import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeKeys, type Keys } from "../../runtime/store/keys.js";
import { ShardLayout } from "../../runtime/shards/shards.js";
import { shortId } from "../../runtime/store/ids.js";
import { verifyAudit } from "../../runtime/audit/verify.js";
import { sample } from "./prometheus.js";
import { KEYS, REDIS_URL, startStack, type Stack } from "./stack.js";

/**
 * Issue 20, fault isolation: a fault inside one execution's transitions (here
 * its stored state made unreadable, so every load of that run throws) fails
 * that job only. BullMQ tries it again with backoff; after the last attempt the
 * execution fails with States.Runtime and a cause that names the fault, and
 * nothing enqueues the job again. Other executions and the API carry on.
 */
let stack: Stack;
let redis: Redis;

const waitThenPass = (seconds: number) => ({
  StartAt: "W",
  States: {
    W: { Type: "Wait", Seconds: seconds, Next: "P" },
    P: { Type: "Pass", End: true },
  },
});

beforeAll(async () => {
  // The corrupted runs' attempts and the give-up are logged as errors, as they should be.
  stack = await startStack({ expectErrors: /Expected property name|gave up on run/ });
  redis = new Redis(REDIS_URL);
  const { client } = stack;
  for (const [name, definition] of Object.entries({
    healthy: waitThenPass(1),
    root: waitThenPass(4),
    items: {
      StartAt: "M",
      // Items wait long enough to be found and broken while they wait, on a busy machine too.
      States: { M: { Type: "Map", ItemProcessor: waitThenPass(4), End: true } },
    },
  })) {
    expect((await client.post("/v1/state-machines", { name, definition })).status).toBe(201);
  }
});

afterAll(async () => {
  redis?.disconnect();
  await stack?.close();
});

/** Every key matching `pattern` (a whole SCAN: other tests may fill the keyspace). */
async function scanAll(pattern: string): Promise<string[]> {
  const found: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", pattern, "COUNT", 10_000);
    found.push(...keys);
    cursor = next;
  } while (cursor !== "0");
  return found;
}

/** Makes a run's stored state unreadable (what a bug or a bad write would leave). */
async function corrupt(runKey: string): Promise<void> {
  expect(await redis.exists(runKey)).toBe(1);
  await redis.hset(runKey, "n", 0, "s", "{not json");
}

async function start(machine: string, input: unknown = {}): Promise<string> {
  const r = await stack.client.post(`/v1/state-machines/${machine}/executions`, { input });
  expect(r.status).toBe(201);
  return r.body.executionId as string;
}

async function ended(executionId: string): Promise<any> {
  return stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.body.status === "RUNNING" ? undefined : r.body;
  }, 30_000);
}

async function history(executionId: string): Promise<any[]> {
  const r = await stack.client.get(
    `/v1/executions/${encodeURIComponent(executionId)}/history?limit=1000`,
  );
  return r.body.items as any[];
}

/** The keys of an execution's shard, in the layout the service stored (runtime/shards/shards.ts). */
async function keysOf(executionId: string): Promise<Keys> {
  const count = Number(await redis.get(makeKeys(stack.prefix).shardCount));
  return new ShardLayout(stack.prefix, count).keysOf(shortId(executionId));
}

describe("a poison execution fails alone", () => {
  it("a Map item that cannot be processed fails its execution with States.Runtime; others succeed", async () => {
    const poisoned = await start("items", [1, 2, 3, 4]);
    const keys = await keysOf(poisoned);
    const healthy = await start("healthy");
    const exec = shortId(poisoned);
    // The items' runs exist once the Map started them; item 2 is made unreadable
    // while it waits, so the transition its timer asks for throws every time.
    const item = await stack.client.until(async () => {
      const found = await scanAll(`${keys.run(exec)}/*/2`);
      // Parked in its Wait (Started and the Continue that entered W, one batched commit:
      // runtime/commit/transition.ts, "Batching"): nothing writes it now.
      return found[0] && (await redis.hget(found[0], "q")) === "1" ? found[0] : undefined;
    });
    await corrupt(item);

    const record = await ended(poisoned);
    expect(record.status).toBe("FAILED");
    expect(record.error).toBe("States.Runtime");
    expect(record.cause).toContain("Stepwise gave up on run");
    expect(record.cause).toContain("/2'");
    expect(record.cause).toContain("after 3 failed attempts");
    expect(record.cause).toContain("SyntaxError");

    // The ordinary step failed it: its history ends as AWS ends a failed execution.
    const events = await history(poisoned);
    expect(events.at(-1)).toMatchObject({
      type: "ExecutionFailed",
      executionFailedEventDetails: { error: "States.Runtime" },
    });
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));

    // The other execution, started alongside, was never disturbed.
    expect((await ended(healthy)).status).toBe("SUCCEEDED");
    // The run that could not advance is gone once its stop failed too: nothing re-enqueues it.
    await stack.client.until(async () => ((await redis.exists(item)) === 0 ? true : undefined));
    expect(await redis.zscore(keys.schedule, `r:${item.slice(keys.base.length + 2)}`)).toBe(null);
  }, 60_000);

  it("a root run that cannot be processed, not even to stop it, is ended FAILED without the step", async () => {
    const poisoned = await start("root");
    const keys = await keysOf(poisoned);
    const exec = shortId(poisoned);
    // Wait for it to park in W, then break its state.
    await stack.client.until(async () =>
      (await history(poisoned)).some((e) => e.type === "WaitStateEntered") ? true : undefined,
    );
    await corrupt(keys.run(exec));

    const record = await ended(poisoned);
    expect(record).toMatchObject({ status: "FAILED", error: "States.Runtime" });
    expect(record.cause).toContain(`Stepwise gave up on run '${poisoned}'`);
    const events = await history(poisoned);
    const last = events.at(-1);
    expect(last).toMatchObject({
      type: "ExecutionFailed",
      executionFailedEventDetails: { error: "States.Runtime", cause: record.cause },
    });
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(await redis.exists(keys.run(exec))).toBe(0);
    // The ExecutionFailed the give-up script appended extends the hash chain.
    const audit = await fetch(`${stack.url}/v1/executions/${poisoned}/audit`, {
      headers: { authorization: `Bearer ${KEYS.admin}` },
    });
    expect(verifyAudit(await audit.text())).toMatchObject({
      ok: true,
      head: { eventId: events.length },
    });

    // The API is up, new executions run, and /metrics counts both poison executions.
    expect((await stack.client.get("/health")).status).toBe(200);
    expect((await ended(await start("healthy"))).status).toBe("SUCCEEDED");
    const metrics = (await stack.client.get("/metrics")).text;
    expect(sample(metrics, "stepwise_executions_given_up_total")).toBe(2);
    expect(sample(metrics, "stepwise_executions", { status: "FAILED" })).toBe(2);
  }, 60_000);
});
