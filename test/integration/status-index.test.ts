import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EXECUTION_STATUSES } from "../../runtime/contract/index.js";
import { makeKeys } from "../../runtime/store/keys.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { harness, REDIS_URL, type Harness, ONE_SHARD } from "./helpers.js";
import { CommandMonitor } from "./monitor.js";

/**
 * Issue 21: a status-filtered page used to scan the whole store (every record,
 * payloads included) until it found `limit` matches. Now each status has its
 * own index, kept by the scripts that change a status, and a page costs a
 * bounded number of Redis commands whatever the store holds. Counted here with
 * MONITOR on real Redis: every command that names this test's keys, inside
 * scripts included.
 */
const STORED = 1_500;
let h: Harness;
let monitor: CommandMonitor;
let redis: Redis;
let stopped: string;

beforeAll(async () => {
  // Reads one shard's keys by name (helpers.ts ONE_SHARD).
  h = await harness(ONE_SHARD);
  await h.runtime.createStateMachine("w", {
    StartAt: "W",
    States: { W: { Type: "Wait", Seconds: 3600, End: true } },
  });
  // No worker: every execution stays RUNNING with its Started event queued.
  const ids: string[] = [];
  for (let i = 0; i < STORED; i += 100) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(100, STORED - i) }, (_, k) =>
        h.runtime.startExecution("w", { name: `e${i + k}`, input: { pad: "x".repeat(200) } }),
      ),
    );
    ids.push(...batch.map((b) => b.executionId));
  }
  // The first one started is the rare status, so a scan would read every other first.
  stopped = ids[0]!;
  expect((await h.runtime.stopExecution(stopped)).status).toBe("ABORTED");
  redis = new Redis(REDIS_URL);
  monitor = new CommandMonitor(REDIS_URL, h.prefix);
}, 60_000);

afterAll(async () => {
  monitor?.close();
  redis?.disconnect();
  await h?.close();
});

function commandsOf<T>(work: () => Promise<T>): Promise<{ result: T; commands: string[][] }> {
  return monitor.commandsOf(work);
}

describe("status-filtered listings", () => {
  it("a page of a rare status costs a few commands, not one per stored execution", async () => {
    // The first listing with a status builds the index once (it is then marked built).
    await h.runtime.listExecutions({ status: "ABORTED", limit: 1 });
    const { result, commands } = await commandsOf(() =>
      h.runtime.listExecutions({ status: "ABORTED", limit: 1 }),
    );
    expect(result.items.map((e) => e.executionId)).toEqual([stopped]);
    expect(result.nextCursor).toBeUndefined();
    expect(commands.length).toBeLessThanOrEqual(8);
    expect(commands.filter((c) => c[0]?.toLowerCase() === "hmget")).toHaveLength(1);
  });

  it("a page of the common status and its next page cost the same, and read only listing fields", async () => {
    const first = await commandsOf(() =>
      h.runtime.listExecutions({ stateMachine: "w", status: "RUNNING", limit: 5 }),
    );
    expect(first.result.items).toHaveLength(5);
    expect(first.result.items.every((e) => e.status === "RUNNING")).toBe(true);
    const next = await commandsOf(() =>
      h.runtime.listExecutions({
        stateMachine: "w",
        status: "RUNNING",
        limit: 5,
        cursor: first.result.nextCursor!,
      }),
    );
    expect(next.result.items).toHaveLength(5);
    expect(next.result.items[0]!.startedAt <= first.result.items[4]!.startedAt).toBe(true);
    for (const run of [first, next]) {
      expect(run.commands.length).toBeLessThanOrEqual(12);
      // Items are summaries: no input or output is read or returned.
      expect(run.commands.some((c) => c[0]?.toLowerCase() === "hgetall")).toBe(false);
      for (const item of run.result.items) {
        expect(item).not.toHaveProperty("input");
        expect(item).not.toHaveProperty("output");
      }
    }
  });

  it("an unfiltered page merges the status indexes: every execution once, newest first, at a cost bounded by the page", async () => {
    // The status indexes are the only execution indexes: without a status, a page
    // reads each status's index after the cursor in one MULTI and merges them.
    const all: { id: string; startedAt: string }[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.runtime.listExecutions({
        stateMachine: "w",
        limit: 250,
        ...(cursor ? { cursor } : {}),
      });
      all.push(...page.items.map((e) => ({ id: e.executionId, startedAt: e.startedAt })));
      cursor = page.nextCursor;
    } while (cursor);
    expect(all).toHaveLength(STORED);
    expect(new Set(all.map((e) => e.id)).size).toBe(STORED);
    expect(all.map((e) => e.id)).toContain(stopped);
    for (let i = 1; i < all.length; i++) {
      expect(all[i]!.startedAt <= all[i - 1]!.startedAt).toBe(true);
    }
    const first = await h.runtime.listExecutions({ limit: 5 });
    const { result, commands } = await commandsOf(() =>
      h.runtime.listExecutions({ limit: 5, cursor: first.nextCursor! }),
    );
    expect(result.items).toHaveLength(5);
    // Per status: the cursor's ties and the older entries; MULTI and EXEC; one
    // HMGET per item (and one more to see that a next page exists).
    const statuses = EXECUTION_STATUSES.length;
    expect(commands.length).toBeLessThanOrEqual(2 * statuses + 2 + 6);
    expect(commands.filter((c) => c[0]?.toLowerCase() === "hmget").length).toBeLessThanOrEqual(6);
  });

  it("executions stored before the indexes existed are indexed once, on the first filtered listing", async () => {
    const keys = makeKeys(h.prefix);
    // As a deployment upgraded in place would have it: the time indexes it kept
    // then (`xs`, `xs:<machine>`), and no status index at all.
    const global = EXECUTION_STATUSES.map((s) => keys.executionsByStatus(s));
    await redis.zunionstore(keys.executions, global.length, ...global);
    const ofW = EXECUTION_STATUSES.map((s) => keys.executionsByStatus(s, "w"));
    await redis.zunionstore(keys.executionsOf("w"), ofW.length, ...ofW);
    expect(await redis.zcard(keys.executions)).toBe(STORED);
    const old = await redis.keys(`${keys.base}xst*`);
    expect(old.length).toBeGreaterThan(0);
    await redis.del(...old);
    const fresh = createRedisRuntime({ redisUrl: REDIS_URL, prefix: h.prefix });
    try {
      const aborted = await fresh.listExecutions({ status: "ABORTED" });
      expect(aborted.items.map((e) => e.executionId)).toEqual([stopped]);
      expect(await redis.zcard(keys.executionsByStatus("RUNNING"))).toBe(STORED - 1);
      expect(await redis.zcard(keys.executionsByStatus("RUNNING", "w"))).toBe(STORED - 1);
      expect(await redis.exists(keys.statusIndexBuilt)).toBe(1);
    } finally {
      await fresh.close();
    }
  });
});
