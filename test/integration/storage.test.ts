import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import type { ExecutionStatus } from "../../runtime/contract/index.js";
import { unpack } from "../../runtime/store/codec.js";
import { JobQueues } from "../../runtime/worker/queues.js";
import { RedisClient } from "../../runtime/store/redis.js";
import { Scheduler } from "../../runtime/worker/scheduler.js";
import { STORAGE_VERSION } from "../../runtime/store/storage-version.js";
import { resolveSettings } from "../../runtime/settings.js";
import { functionRunner } from "../../task-runners/function.js";
import {
  createMachine,
  fullHistory,
  harnessPerTest,
  historyProblems,
  until,
  type Harness,
  ONE_SHARD,
} from "./helpers.js";
import { faultFields } from "../../runtime/tracing/logger.js";
import { verifyAudit } from "../../runtime/audit/verify.js";

// How runs are stored (runtime/store/codec.ts, runtime/store/lua/run-state.ts) and how a
// job goes on with its run's next transitions (runtime/commit/transition.ts, "Chaining").

let h: Harness;
let redis: Redis;
// Reads one shard's keys by name (helpers.ts ONE_SHARD).
harnessPerTest((fresh) => ({ h, redis } = fresh), ONE_SHARD);

/** A run whose state holds ~20 KB of random text (it does not compress), then a few bytes. */
const growAndShrink = {
  StartAt: "Grow",
  States: {
    Grow: { Type: "Pass", Next: "Hold" },
    // Long enough to read the run's hash while it waits, on a loaded machine too.
    Hold: { Type: "Wait", Seconds: 5, Next: "Shrink" },
    Shrink: { Type: "Pass", Result: { small: true }, Next: "Park" },
    Park: { Type: "Wait", Seconds: 30, End: true },
  },
};

async function runHash(exec: string): Promise<Record<string, Buffer>> {
  const raw = await redis.hgetallBuffer(h.runtime.keys.run(exec));
  return raw as unknown as Record<string, Buffer>;
}

describe("run storage", () => {
  it("keeps a small run state in 64-byte slices, a large one in one field, and drops what it no longer needs", async () => {
    await h.startWorker();
    await createMachine(h.runtime, "grow", growAndShrink);
    const blob = randomBytes(10_000).toString("hex");
    const { executionId } = await h.runtime.startExecution("grow", { input: { blob }, name: "g" });
    const exec = "grow:g";
    await until(async () =>
      (await h.runtime.getHistory(executionId, { limit: 1000 })).items.some(
        (e) => e.type === "WaitStateEntered",
      ),
    );
    const big = await runHash(exec);
    // ~20 KB: one field, no slices.
    expect(big.n!.toString()).toBe("0");
    expect(Object.keys(big).filter((k) => /^s\d+$/.test(k))).toEqual([]);
    const state = JSON.parse(unpack(big.s!));
    expect(state.current.name).toBe("Hold");
    expect(state.current.phase.output.blob).toBe(blob);
    // The state's large input is kept apart, written once (runtime/commit/transition.ts, storedState).
    expect(state.current.input).toBeUndefined();
    expect(JSON.parse(unpack(big.in!)).blob).toBe(blob);

    await until(async () => {
      const { items } = await h.runtime.getHistory(executionId, { limit: 1000 });
      return items.filter((e) => e.type === "WaitStateEntered").length === 2;
    });
    const small = await runHash(exec);
    const m = Number(small.n!.toString());
    // A few slices: the state, its random seed (32 hex), a frame; not the 20 KB of before.
    expect(m).toBeLessThanOrEqual(6);
    expect(m).toBeGreaterThan(0);
    const slices = Object.keys(small).filter((k) => /^s\d*$/.test(k));
    expect(slices.sort()).toEqual(Array.from({ length: m }, (_, i) => `s${i + 1}`).sort());
    for (const k of slices) expect(small[k]!.length).toBeLessThanOrEqual(64);
    expect(small.in).toBeUndefined();
    expect(small.iv).toBeUndefined();
    await h.runtime.stopExecution(executionId, {});

    // A run whose state stays small keeps Redis's compact encoding (a hash never goes back).
    const small2 = await h.runtime.startExecution("grow", { input: { n: 1 }, name: "s" });
    await until(async () =>
      (await h.runtime.getHistory(small2.executionId, { limit: 1000 })).items.some(
        (e) => e.type === "WaitStateEntered",
      ),
    );
    expect(await redis.object("ENCODING", h.runtime.keys.run("grow:s"))).toBe("listpack");
    await h.runtime.stopExecution(small2.executionId, {});
  });

  it("stores history packed and reads it back as AWS-shaped JSON", async () => {
    await h.startWorker();
    await createMachine(h.runtime, "p", {
      StartAt: "A",
      States: { A: { Type: "Pass", Result: { "naïve ✓": '\u0000"\\' }, End: true } },
    });
    const { executionId } = await h.runtime.startExecution("p", { input: { x: "é" } });
    const record = await h.runtime.waitForExecution(executionId, 5_000);
    expect(record.output).toEqual({ "naïve ✓": '\u0000"\\' });
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history.at(-1)!.executionSucceededEventDetails).toMatchObject({
      output: JSON.stringify({ "naïve ✓": '\u0000"\\' }),
    });
    const stored = await redis.lindexBuffer(
      h.runtime.keys.history(executionId.split(":").slice(-2).join(":")),
      0,
    );
    expect(stored![0]).toBe(0x1f);
  });
});

describe("payloads stored once (runtime/payloads/history-payloads.ts)", () => {
  const CHAIN = 50;
  const chain = {
    StartAt: "P0",
    States: Object.fromEntries(
      Array.from({ length: CHAIN }, (_, i) => [
        `P${i}`,
        i < CHAIN - 1 ? { Type: "Pass", Next: `P${i + 1}` } : { Type: "Pass", End: true },
      ]),
    ),
  };

  /** MEMORY USAGE summed over every key that names the execution. */
  async function bytesOf(exec: string): Promise<{ total: number; keys: string[] }> {
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await redis.scan(cursor, "MATCH", `${h.prefix}:*`, "COUNT", 1000);
      cursor = next;
      keys.push(...batch.filter((k) => k.endsWith(`:${exec}`) || k.includes(`:${exec}/`)));
    } while (cursor !== "0");
    let total = 0;
    for (const key of keys)
      total += Number(await redis.call("MEMORY", "USAGE", key, "SAMPLES", "0"));
    return { total, keys: keys.sort() };
  }

  it("a 50-state chain with a 200 KB input keeps at most 3 times its input, and every reader sees it whole", async () => {
    await h.startWorker();
    await createMachine(h.runtime, "chain", chain);
    // Random hex: neither the codec nor Redis can shrink it.
    const input = { blob: randomBytes(100 * 1024).toString("hex") };
    const inputBytes = JSON.stringify(input).length;
    const { executionId } = await h.runtime.startExecution("chain", { input, name: "big" });
    const record = await h.runtime.waitForExecution(executionId, 30_000);
    expect(record.status).toBe("SUCCEEDED");
    expect(record.input).toEqual(input);
    expect(record.output).toEqual(input);

    const { total, keys } = await bytesOf("chain:big");
    const k = h.runtime.keys;
    expect(keys).toEqual(
      [
        k.execution("chain:big"),
        k.history("chain:big"),
        k.journal("chain:big"),
        k.payloads("chain:big"),
      ].sort(),
    );
    expect(total).toBeLessThanOrEqual(3 * inputBytes);
    // One stored copy: the record, the journal and 100 events refer to it.
    expect(await redis.hlen(k.payloads("chain:big"))).toBe(1);

    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history).toHaveLength(2 + 2 * CHAIN);
    const text = JSON.stringify(input);
    expect(history[0]!.executionStartedEventDetails).toMatchObject({ input: text });
    for (const event of history.slice(1, -1)) {
      const details = (event.stateEnteredEventDetails ?? event.stateExitedEventDetails)!;
      expect(details.input ?? details.output).toBe(text);
    }
    expect(history.at(-1)!.executionSucceededEventDetails).toMatchObject({ output: text });
    const journal = await h.runtime.journal(executionId);
    expect(journal[0]!.event).toMatchObject({ type: "Started", input });
    // The audit chain is over the events as shown: it verifies through the references.
    const exported = (await h.runtime.exportAudit(executionId)).join("\n");
    expect(verifyAudit(exported)).toMatchObject({ ok: true });
  });

  it("keeps small payloads inline, with no payload hash at all", async () => {
    await h.startWorker();
    await createMachine(h.runtime, "chain", chain);
    const { executionId } = await h.runtime.startExecution("chain", {
      input: { small: "x".repeat(100) },
      name: "small",
    });
    expect((await h.runtime.waitForExecution(executionId, 30_000)).status).toBe("SUCCEEDED");
    expect(await redis.exists(h.runtime.keys.payloads("chain:small"))).toBe(0);
  });
});

describe("chaining", () => {
  const chain = {
    StartAt: "P0",
    States: Object.fromEntries(
      Array.from({ length: 30 }, (_, i) => [
        `P${i}`,
        i < 29
          ? { Type: "Pass", Result: i, ResultPath: `$.last`, Next: `P${i + 1}` }
          : { Type: "Pass", End: true },
      ]),
    ),
  };

  for (const transitions of [1, 4, 100]) {
    it(`gives the same output and history with at most ${transitions} transition(s) per job`, async () => {
      await h.startWorker({ chain: { transitions, ms: 1_000 } });
      await createMachine(h.runtime, "c", chain);
      const { executionId } = await h.runtime.startExecution("c", { input: {}, name: "one" });
      const record = await h.runtime.waitForExecution(executionId, 10_000);
      expect(record.status).toBe("SUCCEEDED");
      expect(record.output).toEqual({ last: 28 });
      const history = await fullHistory(h.runtime, executionId);
      expect(historyProblems(history)).toEqual([]);
      expect(history.map((e) => e.type)).toEqual([
        "ExecutionStarted",
        ...Array.from({ length: 30 }, () => ["PassStateEntered", "PassStateExited"]).flat(),
        "ExecutionSucceeded",
      ]);
    });
  }

  for (const [transitions, commits] of [
    [1, 32],
    [100, 1],
  ] as const) {
    it(`commits a Pass chain's steps ${transitions === 1 ? "one by one" : "together"} (chain budget ${transitions}): ${commits} commit(s), one journal entry per step`, async () => {
      await h.startWorker({ chain: { transitions, ms: 1_000 } });
      await createMachine(h.runtime, "held", {
        StartAt: "P0",
        States: {
          ...Object.fromEntries(
            Array.from({ length: 30 }, (_, i) => [
              `P${i}`,
              {
                Type: "Pass",
                Result: i,
                ResultPath: "$.last",
                Next: i < 29 ? `P${i + 1}` : "Hold",
              },
            ]),
          ),
          Hold: { Type: "Wait", Seconds: 60, End: true },
        },
      });
      const { executionId } = await h.runtime.startExecution("held", { input: {}, name: "one" });
      // The last step arms the Wait's timer and writes no history event: it may
      // commit just after WaitStateEntered shows, so the wait is for its timer.
      await until(async () => (await redis.hget(h.runtime.keys.stats, "timers")) === "1");
      // Started, 30 Passes and the Wait entered: 32 steps, whatever the commits.
      const journal = await h.runtime.journal(executionId);
      expect(journal.map((j) => `${j.event.type}@${j.event.eventId}`)).toEqual(
        Array.from({ length: 32 }, (_, i) => `${i === 0 ? "Started" : "Continue"}@${1 + 2 * i}`),
      );
      // The run's seq counts commits: batched, the chain up to the Wait was one.
      expect(await redis.hget(h.runtime.keys.run("held:one"), "q")).toBe(String(commits));
      const history = await fullHistory(h.runtime, executionId);
      expect(historyProblems(history)).toEqual([]);
      expect(history).toHaveLength(1 + 60 + 1);
      await h.runtime.stopExecution(executionId, {});
    });
  }

  it("a stop that arrives mid-chain ends the chain: the execution is ABORTED, history intact", async () => {
    const loop = {
      StartAt: "Spin",
      States: {
        Spin: { Type: "Pass", Next: "Again" },
        Again: {
          Type: "Choice",
          Choices: [{ Variable: "$.never", IsPresent: true, Next: "Out" }],
          Default: "Spin",
        },
        Out: { Type: "Succeed" },
      },
    };
    await h.startWorker();
    await createMachine(h.runtime, "loop", loop);
    const { executionId } = await h.runtime.startExecution("loop", { input: {}, name: "spin" });
    await until(
      async () =>
        (await h.runtime.describeExecution(executionId)).status === "RUNNING" &&
        (await h.runtime.getHistory(executionId, { limit: 1000 })).items.length >= 200,
    );
    const stopped = await h.runtime.stopExecution(executionId, { error: "Enough" });
    expect(stopped.status).toBe("ABORTED");
    await new Promise((r) => setTimeout(r, 200));
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history.at(-1)!.type).toBe("ExecutionAborted");
    expect(history.filter((e) => e.type === "ExecutionAborted")).toHaveLength(1);
  });
});

describe("a run the interpreter cannot advance", () => {
  it("fails its execution with States.Runtime once, instead of retrying forever", async () => {
    const errors: unknown[] = [];
    await h.startWorker({ onError: (e) => errors.push(e) });
    await createMachine(h.runtime, "w", {
      StartAt: "Nap",
      States: {
        Nap: { Type: "Wait", Seconds: 3, Next: "After" },
        After: { Type: "Pass", End: true },
      },
    });
    const { executionId } = await h.runtime.startExecution("w", { input: {}, name: "bad" });
    const key = h.runtime.keys.run("w:bad");
    await until(async () =>
      (await h.runtime.getHistory(executionId, { limit: 100 })).items.some(
        (e) => e.type === "WaitStateEntered",
      ),
    );
    // Damage the stored state the way a bug or a bad migration could: a state that does not exist.
    const n = Number(await redis.hget(key, "n"));
    const slices = await redis.hmgetBuffer(
      key,
      ...Array.from({ length: n }, (_, i) => `s${i + 1}`),
    );
    const state = JSON.parse(unpack(Buffer.concat(slices as Buffer[])));
    state.current.name = "Vanished";
    await redis.hdel(key, ...Array.from({ length: n }, (_, i) => `s${i + 1}`));
    await redis.hset(key, "n", 1, "s1", JSON.stringify(state));

    const record = await h.runtime.waitForExecution(executionId, 10_000);
    expect(record.status).toBe("FAILED");
    expect(record.error).toBe("States.Runtime");
    expect(record.cause).toMatch(/could not process the TimerFired event of state 'Vanished'/);
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history.at(-1)!.type).toBe("ExecutionFailed");
    expect(history.filter((e) => e.type === "ExecutionFailed")).toHaveLength(1);
    expect(errors.length).toBeGreaterThan(0);
    // Reported with the fields its log line carries (runtime/tracing/logger.ts).
    expect(errors.map(faultFields)).toContainEqual({ executionId, stateName: "Vanished" });
    const journal = await h.runtime.journal(executionId);
    expect(journal.at(-1)!.event).toMatchObject({ type: "Stop", status: "FAILED" });
  });
});

describe("retention", () => {
  const fan = {
    StartAt: "Fan",
    States: {
      Fan: {
        Type: "Map",
        ItemProcessor: { StartAt: "One", States: { One: { Type: "Pass", End: true } } },
        End: true,
      },
    },
  };

  it("expires an ended execution's keys (its children's went as they ended), and prunes the indexes", async () => {
    await h.startWorker({ retentionSeconds: 1 });
    await createMachine(h.runtime, "fan", fan);
    // One item large enough to be stored once, by reference (runtime/payloads/history-payloads.ts).
    const input = [1, 2, "x".repeat(2_000)];
    const { executionId } = await h.runtime.startExecution("fan", { input, name: "f" });
    expect((await h.runtime.waitForExecution(executionId, 5_000)).status).toBe("SUCCEEDED");
    const keys = h.runtime.keys;
    const own = [
      keys.execution("fan:f"),
      keys.history("fan:f"),
      keys.journal("fan:f"),
      keys.payloads("fan:f"),
    ];
    // A success cannot be redriven: its root run went with its last commit.
    expect(await redis.exists(keys.run("fan:f"), keys.inbox("fan:f"))).toBe(0);
    // Joined children are deleted by their parent's worker (runtime/commit/ended-runs.ts).
    await until(async () => (await redis.keys(`${keys.base}r:fan:f/*`)).length === 0, 5_000);
    const children: string[] = [];
    for (const key of own) {
      const ttl = await redis.pttl(key);
      expect(ttl, key).toBeGreaterThan(0);
      expect(ttl, key).toBeLessThanOrEqual(1000);
    }
    await until(async () => (await redis.exists(...own, ...children)) === 0, 5_000);
    await expect(h.runtime.describeExecution(executionId)).rejects.toMatchObject({
      code: "ExecutionDoesNotExist",
    });
    expect((await h.runtime.listExecutions({})).items).toEqual([]);
    // Its index entries outlive the record until the scheduler prunes them.
    expect(await redis.zcard(keys.executionsByStatus("SUCCEEDED"))).toBe(1);
    expect(await redis.zcard(keys.executionsByStatus("SUCCEEDED", "fan"))).toBe(1);

    const client = new RedisClient(h.redisUrl);
    const queues = new JobQueues(client.redis, keys);
    const scheduler = new Scheduler(client, keys, queues, resolveSettings({ retentionSeconds: 1 }));
    try {
      expect(await scheduler.prune(Date.now() + 2_000)).toBe(1);
      expect(await redis.zcard(keys.executionsByStatus("SUCCEEDED"))).toBe(0);
      expect(await redis.zcard(keys.executionsByStatus("SUCCEEDED", "fan"))).toBe(0);
    } finally {
      await queues.close();
      await client.close();
    }
  });

  it("prunes the index entries of every ended status whose records expired, and leaves running ones", async () => {
    // Ended by the worker, whose retention is 1 s (a stop would be committed by this
    // test's runtime, with the default retention).
    await h.startWorker({ retentionSeconds: 1 });
    await createMachine(h.runtime, "ends", {
      StartAt: "How",
      States: {
        How: {
          Type: "Choice",
          Choices: [
            { Variable: "$.end", StringEquals: "fail", Next: "Fail" },
            { Variable: "$.end", StringEquals: "wait", Next: "Hold" },
          ],
          Default: "Done",
        },
        Fail: { Type: "Fail", Error: "Boom" },
        Hold: { Type: "Wait", Seconds: 3600, End: true },
        Done: { Type: "Succeed" },
      },
    });
    await createMachine(h.runtime, "late", {
      TimeoutSeconds: 1,
      StartAt: "Hold",
      States: { Hold: { Type: "Wait", Seconds: 3600, End: true } },
    });
    const ok = await h.runtime.startExecution("ends", { input: { end: "succeed" }, name: "ok" });
    const failed = await h.runtime.startExecution("ends", {
      input: { end: "fail" },
      name: "failed",
    });
    const held = await h.runtime.startExecution("ends", { input: { end: "wait" }, name: "held" });
    const late = await h.runtime.startExecution("late", { input: {}, name: "late" });
    expect((await h.runtime.waitForExecution(ok.executionId, 5_000)).status).toBe("SUCCEEDED");
    expect((await h.runtime.waitForExecution(failed.executionId, 5_000)).status).toBe("FAILED");
    expect((await h.runtime.waitForExecution(late.executionId, 10_000)).status).toBe("TIMED_OUT");
    const keys = h.runtime.keys;
    const entries = async (status: ExecutionStatus, machine: string) =>
      (await redis.zcard(keys.executionsByStatus(status))) +
      (await redis.zcard(keys.executionsByStatus(status, machine)));
    const counts = async () => ({
      SUCCEEDED: await entries("SUCCEEDED", "ends"),
      FAILED: await entries("FAILED", "ends"),
      TIMED_OUT: await entries("TIMED_OUT", "late"),
      RUNNING: await entries("RUNNING", "ends"),
    });
    expect(await counts()).toEqual({ SUCCEEDED: 2, FAILED: 2, TIMED_OUT: 2, RUNNING: 2 });
    const gone = [
      keys.execution("ends:ok"),
      keys.execution("ends:failed"),
      keys.execution("late:late"),
    ];
    await until(async () => (await redis.exists(...gone)) === 0, 5_000);
    const client = new RedisClient(h.redisUrl);
    const queues = new JobQueues(client.redis, keys);
    const scheduler = new Scheduler(client, keys, queues, resolveSettings({ retentionSeconds: 1 }));
    try {
      // One call walks the ended statuses in turn (each slice stops at its cutoff).
      expect(await scheduler.prune(Date.now() + 2_000)).toBe(3);
      expect(await counts()).toEqual({ SUCCEEDED: 0, FAILED: 0, TIMED_OUT: 0, RUNNING: 2 });
      const listed = await h.runtime.listExecutions({});
      expect(listed.items.map((e) => e.executionId)).toEqual([held.executionId]);
    } finally {
      await queues.close();
      await client.close();
    }
  });

  it("keeps closed executions 90 days by default, and forever with 0", async () => {
    await createMachine(h.runtime, "fan", fan);
    const a = await h.startWorker();
    const first = await h.runtime.startExecution("fan", { input: [1], name: "default" });
    await h.runtime.waitForExecution(first.executionId, 5_000);
    const ttl = await redis.ttl(h.runtime.keys.execution("fan:default"));
    expect(ttl).toBeGreaterThan(89 * 86_400);
    expect(ttl).toBeLessThanOrEqual(90 * 86_400);
    await a.close();
    await h.startWorker({ retentionSeconds: 0 });
    const second = await h.runtime.startExecution("fan", { input: [1], name: "forever" });
    await h.runtime.waitForExecution(second.executionId, 5_000);
    expect(await redis.ttl(h.runtime.keys.execution("fan:forever"))).toBe(-1);
  });
});

describe("a stop before the first transition", () => {
  it("is not lost: the execution starts and is ABORTED right after", async () => {
    await createMachine(h.runtime, "w", {
      StartAt: "Nap",
      States: { Nap: { Type: "Wait", Seconds: 60, End: true } },
    });
    // No worker yet: Started is still in the inbox when the stop arrives.
    const { executionId } = await h.runtime.startExecution("w", { input: {}, name: "early" });
    const stopped = await h.runtime.stopExecution(executionId, { error: "Early" });
    expect(stopped.status).toBe("ABORTED");
    expect(stopped.error).toBe("Early");
    await h.startWorker();
    await new Promise((r) => setTimeout(r, 200));
    expect((await h.runtime.describeExecution(executionId)).status).toBe("ABORTED");
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history.map((e) => e.type)).toEqual([
      "ExecutionStarted",
      "WaitStateEntered",
      "ExecutionAborted",
    ]);
  });
});

describe("listing executions page by page", () => {
  it("neither repeats nor skips one when executions start between pages or share a start time", async () => {
    await createMachine(h.runtime, "l", {
      StartAt: "Nap",
      States: { Nap: { Type: "Wait", Seconds: 60, End: true } },
    });
    // Started together: many share a millisecond (the index's score).
    const names = Array.from({ length: 30 }, (_, i) => `n${i}-${"é😀".repeat(i % 3)}`);
    await Promise.all(names.map((name) => h.runtime.startExecution("l", { input: {}, name })));
    const seen: string[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const { items, nextCursor } = await h.runtime.listExecutions({
        stateMachine: "l",
        limit: 4,
        ...(cursor ? { cursor } : {}),
      });
      seen.push(...items.map((r) => r.executionId.split(":").at(-1)!));
      // A newer execution between pages must not shift the next page.
      await h.runtime.startExecution("l", { input: {}, name: `late${page}` });
      if (!nextCursor) break;
      cursor = nextCursor;
    }
    expect(new Set(seen).size).toBe(seen.length);
    expect([...seen].sort()).toEqual([...names].sort());
  });
});

describe("a .waitForTaskToken call that returns", () => {
  it("records TaskSubmitted with the call's answer, then waits for the token", async () => {
    const tokens: string[] = [];
    await h.startWorker({
      taskRunners: [
        functionRunner({
          notify: (_input, request) => {
            tokens.push(request.taskToken!);
            return { MessageId: "m-1" };
          },
        }),
      ],
    });
    await createMachine(h.runtime, "n", {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "function:notify.waitForTaskToken",
          Parameters: { "token.$": "$$.Task.Token" },
          End: true,
        },
      },
    });
    const { executionId } = await h.runtime.startExecution("n", { input: {} });
    await until(async () =>
      (await h.runtime.getHistory(executionId, { limit: 100 })).items.some(
        (e) => e.type === "TaskSubmitted",
      ),
    );
    expect((await h.runtime.describeExecution(executionId)).status).toBe("RUNNING");
    await h.runtime.sendTaskSuccess(tokens[0]!, { answer: 42 });
    const record = await h.runtime.waitForExecution(executionId, 5_000);
    expect(record.output).toEqual({ answer: 42 });
    const history = await fullHistory(h.runtime, executionId);
    expect(historyProblems(history)).toEqual([]);
    expect(history.map((e) => e.type).slice(2, 6)).toEqual([
      "TaskScheduled",
      "TaskStarted",
      "TaskSubmitted",
      "TaskSucceeded",
    ]);
    expect(history[4]!.taskSubmittedEventDetails).toEqual({
      resourceType: "function",
      resource: "notify.waitForTaskToken",
      output: '{"MessageId":"m-1"}',
    });
  });
});

describe("the storage version", () => {
  it("is written by the first worker on a prefix; a worker refuses data of another version", async () => {
    await h.startWorker();
    expect(await redis.get(h.runtime.keys.storageVersion)).toBe(String(STORAGE_VERSION));
    await redis.set(h.runtime.keys.storageVersion, String(STORAGE_VERSION + 1));
    await expect(h.startWorker()).rejects.toThrow(
      `is in storage version ${STORAGE_VERSION + 1}; this Stepwise reads version ${STORAGE_VERSION}`,
    );
  });
});
