import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { makeKeys, type Keys } from "../../runtime/store/keys.js";
import { RedisClient } from "../../runtime/store/redis.js";
import { commitTransition, type CommitOp } from "../../runtime/store/scripts/commit-transition.js";
import { loadTransition } from "../../runtime/store/scripts/load-transition.js";
import { commitKeys } from "../../runtime/commit/transition.js";
import { deleteKeys } from "../e2e/stack.js";
import { CommandMonitor } from "../integration/monitor.js";
import { commitArgs, HEAD } from "./commit-fixture.js";

// Script calls made in one tick leave together, and the calls of one script share
// one EVALSHA, each with its own keys, argument and reply (runtime/store/redis.ts,
// "Batching"; store/lua/prelude.ts `scriptLua`). Seen here on real Redis, with MONITOR.

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = new Redis(url);
const client = new RedisClient(url);
let keys: Keys;
let prefix: string;
let monitor: CommandMonitor;
const runs = Array.from({ length: 40 }, (_, i) => `m:e${i}`);

beforeAll(() => {
  // MONITOR filters by prefix: one for the whole file, runs told apart by name.
  prefix = `t${randomBytes(6).toString("hex")}`;
  keys = makeKeys(prefix);
  monitor = new CommandMonitor(url, prefix);
});
afterAll(async () => {
  monitor.close();
  await deleteKeys(redis, prefix);
  await client.close();
  redis.disconnect();
});
beforeEach(async () => {
  await deleteKeys(redis, prefix);
  for (const run of runs) {
    await redis.hset(keys.run(run), "q", 0, "n", 1, "s1", '{"s":0}');
    await redis.rpush(keys.inbox(run), HEAD);
    await redis.hset(keys.execution(run), "st", "RUNNING", "hc", 0, "hh", "g");
  }
});

const load = (run: string) =>
  client.call(
    loadTransition,
    { run: keys.run(run), inbox: keys.inbox(run), execution: keys.execution(run) },
    {},
  );

const commit = (run: string, ops: CommitOp[] = [], seq = 0) =>
  client.call(
    commitTransition,
    commitKeys(keys, run),
    commitArgs(keys, run, ops, { seq, state: `{"s":"${run}"}` }),
  );

const scriptCalls = (direct: string[][]) =>
  direct.filter((c) => ["eval", "evalsha"].includes(c[0]!.toLowerCase()));

describe("script calls made in one tick", () => {
  it("share one EVALSHA per script, and each call gets its own reply", async () => {
    const { result, direct } = await monitor.commandsOf(() =>
      Promise.all([
        ...runs.map((run) => load(run)),
        ...runs.map((run, i) => commit(run, [], i % 2)),
      ]),
    );
    const loads = result.slice(0, runs.length);
    const commits = result.slice(runs.length);
    // Loads went first (their group's first call came first): each saw its own run, uncommitted.
    for (const reply of loads) {
      expect(reply).toMatchObject({ kind: "loaded", seq: 0, head: HEAD, historyHead: "g" });
    }
    // Every other commit was fenced out by its own seq, the rest committed.
    commits.forEach((reply, i) =>
      expect(reply).toMatchObject(i % 2 === 0 ? { kind: "committed", seq: 1 } : { kind: "stale" }),
    );
    for (const [i, run] of runs.entries()) {
      expect(await redis.hget(keys.run(run), "q")).toBe(i % 2 === 0 ? "1" : "0");
    }
    // Two commands carried the 80 calls: their key counts are 40 calls' keys.
    const sent = scriptCalls(direct);
    expect(sent.map((c) => Number(c[2]))).toEqual([
      runs.length * loadTransition.keys.length,
      runs.length * commitTransition.keys.length,
    ]);
  });

  it("fail alone: a call whose script fails rejects, and the others of its EVALSHA commit", async () => {
    // An error reply from the script (an op it does not know), and an error raised
    // by Redis inside it (a key of the wrong type), beside calls that succeed.
    await redis.del(keys.inbox(runs[3]!));
    await redis.set(keys.inbox(runs[3]!), "not a list");
    const { result, direct } = await monitor.commandsOf(() =>
      Promise.allSettled(
        runs
          .slice(0, 5)
          .map((run, i) => commit(run, i === 1 ? [{ op: "unknown" } as unknown as CommitOp] : [])),
      ),
    );
    expect(result.map((r) => r.status)).toEqual([
      "fulfilled",
      "rejected",
      "fulfilled",
      "rejected",
      "fulfilled",
    ]);
    expect(String((result[1] as PromiseRejectedResult).reason)).toMatch(/unknown op unknown/);
    expect(String((result[3] as PromiseRejectedResult).reason)).toMatch(/WRONGTYPE/);
    for (const i of [0, 2, 4]) {
      expect((result[i] as PromiseFulfilledResult<unknown>).value).toMatchObject({
        kind: "committed",
        seq: 1,
      });
      expect(await redis.hget(keys.run(runs[i]!), "q")).toBe("1");
    }
    expect(scriptCalls(direct)).toHaveLength(1);
  });

  it("go out in the order of each script's first call: a load behind a commit sees it", async () => {
    const [committed, loaded] = await Promise.all([commit(runs[0]!), load(runs[0]!)]);
    expect(committed).toMatchObject({ kind: "committed", seq: 1 });
    expect(loaded).toMatchObject({ kind: "loaded", seq: 1, state: `{"s":"${runs[0]}"}` });
  });

  it("answer a call made after the tick in an EVALSHA of its own", async () => {
    const { result, direct } = await monitor.commandsOf(async () => {
      const first = await load(runs[0]!);
      const second = await load(runs[1]!);
      return [first, second];
    });
    expect(result.map((r) => r.kind)).toEqual(["loaded", "loaded"]);
    expect(scriptCalls(direct).map((c) => Number(c[2]))).toEqual([3, 3]);
  });
});
