import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import type { Join, RunState } from "../../engine/core/run.js";
import { SPAWN_BATCH } from "../../engine/flow/join.js";
import { pack, unpack } from "../../runtime/store/codec.js";
import { runOfTask, shortId } from "../../runtime/store/ids.js";
import { loadTransition } from "../../runtime/store/scripts/load-transition.js";
import { RedisClient } from "../../runtime/store/redis.js";
import {
  createMachine,
  fullHistory,
  harness,
  historyProblems,
  type Harness,
  ONE_SHARD,
} from "./helpers.js";

// A wide Map on Redis: each child's end is a transition of the parent, which must cost
// O(1) however many children ended (engine/flow/join.ts): the children's outputs go to
// the join's hash `jr:` in each child's own commit, and the parent collects them once.
// 1,200 items cross the boundaries a Map of 16,000 crosses: the join starts its children
// in steps of at most SPAWN_BATCH (1,000; engine/flow/join.ts), the rest from kept inputs
// by a ContinueJoin, and collects their outputs in HMGETs of 1,000 fields
// (runtime/store/scripts/commit-transition.ts `collect`); its input, 4.9 KB of JSON, is past
// INPUT_APART_CHARS (runtime/payloads/frame-input.ts). Larger Maps: `npx tsx bench/wide-joins.ts`.
const ITEMS = SPAWN_BATCH + 200;
const EARLY = 120; // end at once
const MIDDLE = 1080; // items EARLY..MIDDLE-1 park on a token released in a second step

/** Items below `early` end at once; the others park on a token. */
const fanOut = (early: number, extra: object = {}) => ({
  StartAt: "Fan",
  States: {
    Fan: {
      Type: "Map",
      ...extra,
      ItemSelector: { "i.$": "$$.Map.Item.Index" },
      ItemProcessor: {
        StartAt: "Early",
        States: {
          Early: {
            Type: "Choice",
            Choices: [{ Variable: "$.i", NumericLessThan: early, Next: "Done" }],
            Default: "Park",
          },
          Done: { Type: "Pass", Parameters: { "i.$": "$.i", ok: true }, End: true },
          Park: {
            Type: "Task",
            Resource: "arn:aws:states:::stepwise:waitForTaskToken",
            Parameters: { "token.$": "$$.Task.Token" },
            End: true,
          },
        },
      },
      End: true,
    },
  },
});

let h: Harness;
let redis: Redis;
beforeEach(async () => {
  // Reads one shard's keys by name (helpers.ts ONE_SHARD).
  h = await harness(ONE_SHARD);
  redis = new Redis(h.redisUrl);
  await h.startWorker();
});
afterEach(async () => {
  redis.disconnect();
  await h.close();
});

/** The parent's state as stored (packed bytes) and decoded. */
async function storedState(exec: string): Promise<{ bytes: number; run: RunState }> {
  const key = h.runtime.keys.run(exec);
  const n = Number(await redis.hget(key, "n"));
  const fields = n === 0 ? ["s"] : Array.from({ length: n }, (_, i) => `s${i + 1}`);
  const stored = Buffer.concat((await redis.hmgetBuffer(key, ...fields)).map((b) => b!));
  return { bytes: stored.length, run: JSON.parse(unpack(stored)) as RunState };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The parent's stored state once `succeeded` children ended and its inbox is empty. */
async function settledAt(exec: string, succeeded: number): Promise<number> {
  return until(`${succeeded} children applied`, async () => {
    const { bytes, run } = await storedState(exec);
    const phase = run.current?.phase;
    const inbox = await redis.llen(h.runtime.keys.inbox(exec));
    if (phase?.kind !== "children" || phase.join.succeeded !== succeeded || inbox > 0) {
      return undefined;
    }
    return bytes;
  });
}

/** Token of each parked item, by item index. */
async function parkedTokens(count: number): Promise<Map<number, string>> {
  return until(`${count} parked items`, async () => {
    const tokens = await redis.hgetall(h.runtime.keys.tokens);
    if (Object.keys(tokens).length < count) return undefined;
    const byIndex = new Map<number, string>();
    for (const [token, task] of Object.entries(tokens)) {
      const run = runOfTask(task);
      byIndex.set(Number(run.slice(run.lastIndexOf("/") + 1)), token);
    }
    return byIndex;
  });
}

async function release(tokens: Map<number, string>, from: number, to: number): Promise<void> {
  const indexes = Array.from({ length: to - from }, (_, k) => from + k);
  for (let k = 0; k < indexes.length; k += 200) {
    await Promise.all(
      indexes
        .slice(k, k + 200)
        .map((i) => h.runtime.sendTaskSuccess(tokens.get(i)!, { i, ok: true })),
    );
  }
}

describe("a windowed Map on Redis (MaxConcurrency)", () => {
  it("keeps the later children's inputs out of the parent's state, hands them out once, and drops them", async () => {
    const items = 400;
    await createMachine(h.runtime, "windowed", {
      StartAt: "Fan",
      States: {
        Fan: {
          Type: "Map",
          MaxConcurrency: 5,
          ItemProcessor: {
            StartAt: "Echo",
            States: { Echo: { Type: "Pass", End: true } },
          },
          End: true,
        },
      },
    });
    const input = Array.from({ length: items }, (_, i) => ({ i, text: `item ${i} `.repeat(4) }));
    const { executionId } = await h.runtime.startExecution("windowed", { input, name: "w" });
    const exec = shortId(executionId);
    const kept = `${h.runtime.keys.base}ji:${exec}/1`;
    // Sample the parent's stored state and the kept inputs while the window moves.
    const sizes: number[] = [];
    const keptCounts: number[] = [];
    for (;;) {
      const record = await h.runtime.describeExecution(executionId);
      if (record.status !== "RUNNING") break;
      // Two reads, not one snapshot: a commit in between gives a torn state; skip it.
      const sample = await storedState(exec).catch(() => undefined);
      if (sample?.run.current?.phase.kind === "children") {
        sizes.push(sample.bytes);
        keptCounts.push(await redis.hlen(kept));
      }
      await new Promise((r) => setTimeout(r, 2));
    }
    const record = await h.runtime.waitForExecution(executionId, 30_000);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output).toEqual(input);
    // The state never held the ~40 bytes × 400 inputs (it stays a few hundred bytes).
    expect(sizes.length).toBeGreaterThan(0);
    expect(Math.max(...sizes)).toBeLessThan(2_000);
    // The kept inputs shrink as children take them, and are gone at the end.
    expect(Math.max(...keptCounts)).toBeLessThanOrEqual(items - 5);
    expect(await redis.exists(kept)).toBe(0);
    expect(historyProblems(await fullHistory(h.runtime, executionId))).toEqual([]);
  });
});

describe("a wide Map on Redis", () => {
  it(`${ITEMS} items: the right output, and the parent's stored state does not grow as children end`, async () => {
    await createMachine(h.runtime, "wide", fanOut(EARLY));
    const { executionId } = await h.runtime.startExecution("wide", {
      input: Array.from({ length: ITEMS }, (_, i) => i),
    });
    const exec = shortId(executionId);
    const tokens = await parkedTokens(ITEMS - EARLY);
    const early = await settledAt(exec, EARLY);
    await release(tokens, EARLY, MIDDLE);
    const late = await settledAt(exec, MIDDLE);
    // 960 more outputs would add over 10 KB; only the counters' digits may change.
    expect(late - early).toBeLessThanOrEqual(4);
    // The Map's 1,200-item input is not in the state: it is kept apart, written once
    // (runtime/payloads/frame-input.ts), and a load by a worker that holds it does not send it.
    expect(late).toBeLessThan(1000);
    const key = h.runtime.keys.run(exec);
    const [input, version] = await redis.hmget(key, "in", "iv");
    expect(JSON.parse(unpack(input!))).toEqual(Array.from({ length: ITEMS }, (_, i) => i));
    const client = new RedisClient(h.redisUrl);
    try {
      const keys = {
        run: key,
        inbox: h.runtime.keys.inbox(exec),
        execution: h.runtime.keys.execution(exec),
      };
      const fresh = await client.call(loadTransition, keys, {});
      expect(fresh.kind === "loaded" && fresh.input).toBe(input);
      const held = await client.call(loadTransition, keys, { inputVersion: version! });
      expect(held.kind === "loaded" && [held.input, held.inputVersion]).toEqual([
        undefined,
        version,
      ]);
    } finally {
      await client.close();
    }
    // The outputs so far are in the join's hash, one field per ended child.
    const jr = `${h.runtime.keys.base}jr:${exec}/1`;
    expect(await redis.hlen(jr)).toBe(MIDDLE);
    await release(tokens, MIDDLE, ITEMS);
    const record = await h.runtime.waitForExecution(executionId, 60_000);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.output).toEqual(Array.from({ length: ITEMS }, (_, i) => ({ i, ok: true })));
    expect(await redis.exists(jr)).toBe(0);
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history.filter((e) => e.type === "MapIterationSucceeded")).toHaveLength(ITEMS);
    expect(history.slice(-4).map((e) => e.type)).toEqual([
      "MapIterationSucceeded",
      "MapStateSucceeded",
      "MapStateExited",
      "ExecutionSucceeded",
    ]);
  }, 60_000);

  /** Each item waits `item.s` seconds, then outputs `item.v`, or fails when `item.fail`. */
  const timed = {
    StartAt: "Check",
    States: {
      Check: {
        Type: "Choice",
        Choices: [{ Variable: "$.fail", IsPresent: true, Next: "Boom" }],
        Default: "W",
      },
      Boom: { Type: "Fail", Error: "Item.Failed", Cause: "bad item" },
      W: { Type: "Wait", SecondsPath: "$.s", Next: "Out" },
      Out: { Type: "Pass", InputPath: "$.v", End: true },
    },
  };

  it("tolerated failures in a MaxConcurrency window give nulls, as in memory", async () => {
    await createMachine(h.runtime, "tolerant", {
      StartAt: "M",
      States: {
        M: {
          Type: "Map",
          MaxConcurrency: 2,
          ToleratedFailurePercentage: 50,
          ItemProcessor: timed,
          End: true,
        },
      },
    });
    const input: Json[] = [{ fail: true }, { s: 0, v: 1 }, { fail: true }, { s: 0, v: 3 }];
    const { executionId } = await h.runtime.startExecution("tolerant", { input });
    const record = await h.runtime.waitForExecution(executionId, 10_000);
    expect(record).toMatchObject({ status: "SUCCEEDED", output: [null, 1, null, 3] });
  });

  it("a failure past the threshold stops the running items (they never finish their wait)", async () => {
    await createMachine(h.runtime, "intolerant", {
      StartAt: "M",
      States: {
        M: {
          Type: "Map",
          MaxConcurrency: 3,
          ToleratedFailureCount: 0,
          ItemProcessor: {
            StartAt: "W",
            States: {
              W: { Type: "Wait", SecondsPath: "$.s", Next: "Check" },
              Check: {
                Type: "Choice",
                Choices: [{ Variable: "$.fail", IsPresent: true, Next: "Boom" }],
                Default: "Out",
              },
              Boom: { Type: "Fail", Error: "Item.Failed", Cause: "bad item" },
              Out: { Type: "Pass", InputPath: "$.v", End: true },
            },
          },
          End: true,
        },
      },
    });
    // Item 0 fails after 1 s; item 1 ends at once and item 3 starts in its place; items
    // 2 and 3 are waiting when item 0 fails, and are stopped.
    const input: Json[] = [
      { s: 1, fail: true },
      { s: 0, v: 1 },
      { s: 60, v: 2 },
      { s: 60, v: 3 },
    ];
    const { executionId } = await h.runtime.startExecution("intolerant", { input });
    const record = await h.runtime.waitForExecution(executionId, 10_000);
    expect(record).toMatchObject({
      status: "FAILED",
      error: "States.ExceedToleratedFailureThreshold",
    });
    const history = await until("the stopped iterations to end", async () => {
      const events = await fullHistory(h.runtime, executionId);
      const aborted = events.filter((e) => e.type === "MapIterationAborted");
      return aborted.length === 2 ? events : undefined;
    });
    expect(historyProblems(history)).toEqual([]);
    const aborted = history
      .filter((e) => e.type === "MapIterationAborted")
      .map((e) => (e.mapIterationAbortedEventDetails as { index: number }).index);
    expect(aborted.sort()).toEqual([2, 3]);
    expect(history.filter((e) => e.type === "MapIterationStarted")).toHaveLength(4);
    expect(history.filter((e) => e.type === "MapIterationSucceeded")).toHaveLength(1);
    expect(history.filter((e) => e.type === "MapIterationFailed")).toHaveLength(1);
  });
});
