import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { shortId } from "../../runtime/store/ids.js";
import { referenced } from "../../runtime/payloads/history-payloads.js";
import {
  RECORD_FIELDS,
  ExecutionCache,
  type RecordFields,
} from "../../runtime/commit/execution-cache.js";
import { byName, EXECUTION_FIELDS, storedFields } from "../../runtime/store/fields.js";
import { RedisClient } from "../../runtime/store/redis.js";
import { ShardLayout } from "../../runtime/shards/shards.js";
import { createMachine, harness, type Harness, ONE_SHARD } from "./helpers.js";

/**
 * A worker's cache of what never changes in an execution (runtime/commit/execution-cache.ts). A burst
 * of fired timers ends thousands of executions it never saw: each is remembered
 * from the record its claim read, without a turn of the event loop when nothing
 * more must be read, and forgotten when it ends.
 */
let h: Harness;
let redis: Redis;
let client: RedisClient;
let layout: ShardLayout;
beforeAll(async () => {
  h = await harness(ONE_SHARD);
  redis = new Redis(h.redisUrl);
  client = new RedisClient(h.redisUrl);
  layout = new ShardLayout(h.prefix, 1);
  await createMachine(h.runtime, "m", { StartAt: "P", States: { P: { Type: "Pass", End: true } } });
});
afterAll(async () => {
  await h.close();
  await client.close();
  redis.disconnect();
});

/** The record's `RECORD_FIELDS` by name, as a load hands them out. */
async function recordOf(exec: string): Promise<RecordFields> {
  const values = await redis.hmget(
    layout.keysOf(exec).execution(exec),
    ...storedFields(EXECUTION_FIELDS, RECORD_FIELDS),
  );
  const record: RecordFields = {};
  for (const [name, value] of Object.entries(byName(RECORD_FIELDS, values))) {
    if (value !== null) record[name as keyof RecordFields] = value;
  }
  return record;
}

describe("the execution cache", () => {
  it("remembers at once once the version is compiled; forgets; reads again after", async () => {
    const { executionId } = await h.runtime.startExecution("m", {
      name: "c1",
      input: { a: [1, 2] },
    });
    const exec = shortId(executionId);
    const record = await recordOf(exec);
    const cache = new ExecutionCache(client, layout);

    // The version was never compiled here: that takes a read.
    expect(cache.rememberNow(exec, record)).toBeUndefined();
    expect(cache.has(exec)).toBe(false);
    const loaded = await cache.remember(exec, record);
    expect(loaded.context).toMatchObject({
      executionId,
      name: "c1",
      input: { a: [1, 2] },
      stateMachineName: "m",
    });
    expect(cache.peek(exec)).toBe(loaded);

    cache.forget(exec);
    expect(cache.has(exec)).toBe(false);
    expect(cache.peek(exec)).toBeUndefined();
    // Compiled now: the same context, built without a read.
    const again = cache.rememberNow(exec, record);
    expect(again?.context).toEqual(loaded.context);
    expect(again?.program).toBe(loaded.program);
    expect(cache.peek(exec)).toBe(again);

    // After a forget, `get` reads the record itself.
    cache.forget(exec);
    expect((await cache.get(exec)).context).toEqual(loaded.context);
  });

  it("an input stored by reference needs its read: not at once", async () => {
    const big = { text: "x".repeat(5000) };
    const { executionId } = await h.runtime.startExecution("m", { name: "c2", input: big });
    const exec = shortId(executionId);
    const record = await recordOf(exec);
    // Past PAYLOAD_INLINE_CHARS the record refers to its input (runtime/payloads/history-payloads.ts).
    expect(referenced(record.input)).toBeDefined();
    const cache = new ExecutionCache(client, layout);
    const small = shortId(
      (await h.runtime.startExecution("m", { name: "c3", input: {} })).executionId,
    );
    await cache.remember(small, await recordOf(small));
    // The version is compiled now; the input is not in the record.
    expect(cache.rememberNow(exec, record)).toBeUndefined();
    expect((await cache.remember(exec, record)).context.input).toEqual(big);
  });

  it("a record without an execution's fields is refused, at once or not", async () => {
    const cache = new ExecutionCache(client, layout);
    expect(() => cache.rememberNow("m:none", { machine: "m" })).toThrow(/has no record/);
    await expect(cache.remember("m:none", { machine: "m" })).rejects.toThrow(/has no record/);
  });
});
