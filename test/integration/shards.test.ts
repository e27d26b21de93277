import { Redis } from "ioredis";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeKeys } from "../../runtime/store/keys.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { shardOfExecution, workerShardsFromEnv } from "../../runtime/shards/shards.js";
import { shortId } from "../../runtime/store/ids.js";
import {
  createMachine,
  deleteKeys,
  harness,
  randomPrefix,
  REDIS_URL,
  until,
  type Harness,
} from "./helpers.js";

/**
 * Executions spread over shards on one Redis (issue 19): every execution-level
 * call finds its shard, listings merge the shards' pages, tokens, activities and
 * approvals cross shards, workers serve a subset, and the count is fixed.
 */
const SHARDS = 4;
let h: Harness;
let redis: Redis;
beforeEach(async () => {
  h = await harness({ shards: SHARDS });
  redis = new Redis(h.redisUrl);
});
afterEach(async () => {
  redis.disconnect();
  await h.close();
});

/** The shards that hold at least one execution record. */
async function shardsHolding(prefix: string): Promise<Set<number>> {
  const held = new Set<number>();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:{sw:*}:x:*`, "COUNT", 1000);
    cursor = next;
    for (const key of keys) held.add(Number(/\{sw:(\d+)\}/.exec(key)![1]));
  } while (cursor !== "0");
  return held;
}

describe("executions on several shards", () => {
  it("land on the shard their id hashes to, run there (Map, Wait), and list as one newest-first page sequence", async () => {
    await createMachine(h.runtime, "spread", {
      StartAt: "Fan",
      States: {
        Fan: {
          Type: "Map",
          ItemsPath: "$.items",
          ItemProcessor: {
            StartAt: "Nap",
            States: {
              Nap: { Type: "Wait", Seconds: 0, Next: "Double" },
              Double: { Type: "Pass", End: true },
            },
          },
          End: true,
        },
      },
    });
    await h.startWorker();
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) {
      const { executionId } = await h.runtime.startExecution("spread", {
        name: `e${i}`,
        input: { items: [i, i + 1, i + 2] },
      });
      ids.push(executionId);
    }
    for (const id of ids) {
      const done = await h.runtime.waitForExecution(id, 20_000);
      const i = Number(done.name.slice(1));
      expect(done).toMatchObject({ status: "SUCCEEDED" });
      expect(done.output).toEqual([i, i + 1, i + 2]);
      // Its record is under its own shard's tag.
      const keys = await h.runtime.keysOf(id);
      expect(keys.shard).toBe(shardOfExecution(shortId(id), SHARDS));
      expect(await redis.exists(keys.execution(shortId(id)))).toBe(1);
    }
    expect(await shardsHolding(h.prefix)).toEqual(new Set([0, 1, 2, 3]));
    // Nothing lives under the single-shard tag but control keys.
    expect(await redis.exists(makeKeys(h.prefix).execution(shortId(ids[0]!)))).toBe(0);

    // Pages of 7 over 4 shards: every execution exactly once, newest first.
    const seen: string[] = [];
    let cursor: string | undefined;
    let previous: { s: number; id: string } | undefined;
    do {
      const page = await h.runtime.listExecutions({
        stateMachine: "spread",
        limit: 7,
        ...(cursor ? { cursor } : {}),
      });
      expect(page.items.length).toBeLessThanOrEqual(7);
      for (const item of page.items) {
        const s = Date.parse(item.startedAt);
        if (previous) expect(s <= previous.s).toBe(true);
        previous = { s, id: item.executionId };
        seen.push(item.executionId);
      }
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen.length).toBe(40);
    expect(new Set(seen)).toEqual(new Set(ids));
    const succeeded = await h.runtime.listExecutions({ status: "SUCCEEDED", limit: 1000 });
    expect(succeeded.items.length).toBe(40);
    expect(succeeded.nextCursor).toBeUndefined();
    // Metrics add the shards up.
    const metrics = await h.runtime.metrics();
    expect(metrics.executionsByStatus?.SUCCEEDED).toBe(40);
  });

  it("answers task tokens on the shard that issued them, and refuses a token no shard issued", async () => {
    await createMachine(h.runtime, "callback", {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "arn:aws:states:::activity:shard-activity",
          End: true,
        },
      },
    });
    await h.runtime.createActivity("shard-activity");
    await h.startWorker();
    const ids = await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        h.runtime
          .startExecution("callback", { name: `c${i}`, input: { n: i } })
          .then((r) => r.executionId),
      ),
    );
    // One poller takes the tasks of every shard.
    const tokens: string[] = [];
    const inputs: number[] = [];
    while (tokens.length < 12) {
      const task = await h.runtime.getActivityTask("shard-activity", 5);
      expect(task).not.toBeNull();
      tokens.push(task!.taskToken);
      inputs.push((task!.input as { n: number }).n);
    }
    expect(inputs.sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
    const marked = new Set(tokens.map((t) => /^s(\d+)-/.exec(t)?.[1]));
    expect(marked.size).toBeGreaterThan(1);
    await expect(h.runtime.sendTaskSuccess("s9-AAAAAAAAAAAAAAAAAAAAAA", {})).rejects.toMatchObject({
      code: "InvalidToken",
    });
    await expect(h.runtime.sendTaskSuccess("AAAAAAAAAAAAAAAAAAAAAA", {})).rejects.toMatchObject({
      code: "InvalidToken",
    });
    // The same token with another shard's mark is unknown there.
    const first = tokens[0]!;
    const other = `s${(Number(/^s(\d+)-/.exec(first)![1]) + 1) % SHARDS}-${first.slice(first.indexOf("-") + 1)}`;
    await expect(h.runtime.sendTaskSuccess(other, {})).rejects.toMatchObject({
      code: "InvalidToken",
    });
    for (const [i, token] of tokens.entries()) await h.runtime.sendTaskSuccess(token, { i });
    for (const id of ids) {
      expect(await h.runtime.waitForExecution(id, 10_000)).toMatchObject({ status: "SUCCEEDED" });
    }
  });

  it("lists, finds, decides and follows approvals across shards", async () => {
    await createMachine(h.runtime, "approve", {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "stepwise:approval",
          Parameters: { Subject: "Ship it?" },
          End: true,
        },
      },
    });
    await h.startWorker();
    const abort = new AbortController();
    const followed: { id: string; approvalId: string }[] = [];
    const following = (async () => {
      for await (const change of h.runtime.followApprovals(undefined, abort.signal)) {
        followed.push({ id: change.id, approvalId: change.approval.approvalId });
      }
    })();
    const ids = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        h.runtime.startExecution("approve", { name: `a${i}` }).then((r) => r.executionId),
      ),
    );
    const shards = new Set(ids.map((id) => shardOfExecution(shortId(id), SHARDS)));
    expect(shards.size).toBeGreaterThan(1);
    await until(
      async () => (await h.runtime.listApprovals({ status: "PENDING" })).items.length === 10,
    );
    // Pages of 3 merge the shards' inboxes without repeats.
    const listed: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await h.runtime.listApprovals({
        status: "PENDING",
        limit: 3,
        ...(cursor ? { cursor } : {}),
      });
      listed.push(...page.items.map((a) => a.approvalId));
      cursor = page.nextCursor;
    } while (cursor);
    expect(listed.length).toBe(10);
    expect(new Set(listed).size).toBe(10);
    for (const approvalId of listed) {
      const record = await h.runtime.getApproval(approvalId);
      await h.runtime.decideApproval(
        approvalId,
        { name: "alice", groups: "any" },
        { decision: "APPROVE", envelopeHash: record.envelopeHash },
      );
    }
    for (const id of ids) {
      expect(await h.runtime.waitForExecution(id, 10_000)).toMatchObject({ status: "SUCCEEDED" });
    }
    await expect(h.runtime.getApproval("ap_000000000000000000000000")).rejects.toMatchObject({
      code: "ApprovalDoesNotExist",
    });
    // The feed saw every creation and decision, with ids that carry every shard's position.
    await until(async () => followed.length >= 20);
    abort.abort();
    await following;
    expect(new Set(followed.map((f) => f.approvalId))).toEqual(new Set(listed));
    const last = followed[followed.length - 1]!.id;
    expect(last.split("_").length).toBe(SHARDS);
    // Resuming from the tenth change gives every change after it, none twice (shards
    // interleave in the order they are read, so only the set is the same).
    const resumed: string[] = [];
    const again = new AbortController();
    const resuming = (async () => {
      for await (const change of h.runtime.followApprovals(followed[9]!.id, again.signal)) {
        resumed.push(change.id);
      }
    })();
    await until(async () => resumed.length >= followed.length - 10);
    again.abort();
    await resuming;
    const after = (id: string) => id.split("_");
    const key = (id: string) => after(id).join(" ");
    expect(new Set(resumed.map(key)).size).toBe(resumed.length);
    // Each resumed change moves exactly one shard past the tenth change's position.
    const rest = followed.slice(10);
    expect(resumed.length).toBe(rest.length);
    const lastOf = (ids: string[]) => ids[ids.length - 1]!;
    expect(key(lastOf(resumed))).toBe(key(lastOf(rest.map((f) => f.id))));
  });

  it("lets a worker serve a subset of the shards (STEPWISE_WORKER_SHARDS)", async () => {
    expect(workerShardsFromEnv("0-1, 3")).toEqual([0, 1, 3]);
    expect(() => workerShardsFromEnv("2-1")).toThrow(/STEPWISE_WORKER_SHARDS/);
    await expect(h.startWorker({ workerShards: [7] })).rejects.toThrow(/has 4/);
    await createMachine(h.runtime, "subset", {
      StartAt: "Done",
      States: { Done: { Type: "Pass", End: true } },
    });
    await h.startWorker({ workerShards: [0, 1] });
    const ids = await Promise.all(
      Array.from({ length: 24 }, (_, i) =>
        h.runtime.startExecution("subset", { name: `w${i}` }).then((r) => r.executionId),
      ),
    );
    const served = ids.filter((id) => shardOfExecution(shortId(id), SHARDS) < 2);
    const other = ids.filter((id) => shardOfExecution(shortId(id), SHARDS) >= 2);
    expect(served.length).toBeGreaterThan(0);
    expect(other.length).toBeGreaterThan(0);
    for (const id of served) {
      expect(await h.runtime.waitForExecution(id, 10_000)).toMatchObject({ status: "SUCCEEDED" });
    }
    for (const id of other) {
      expect((await h.runtime.describeExecution(id)).status).toBe("RUNNING");
    }
    await h.startWorker({ workerShards: [2, 3] });
    for (const id of other) {
      expect(await h.runtime.waitForExecution(id, 10_000)).toMatchObject({ status: "SUCCEEDED" });
    }
  });
});

describe("the shard count", () => {
  it("is fixed when a deployment is created, and a deployment from before shards stays one shard", async () => {
    // This deployment was created with 4: another count is refused, none takes 4.
    expect((await h.runtime.shardLayout()).count).toBe(SHARDS);
    const wrong = createRedisRuntime({ redisUrl: REDIS_URL, prefix: h.prefix, shards: 8 });
    await expect(wrong.listExecutions()).rejects.toThrow(
      /STEPWISE_SHARDS=8.*created with 4 shards/,
    );
    await wrong.close();
    await expect(h.startWorker({ shards: 2 })).rejects.toThrow(/created with 4 shards/);
    const plain = createRedisRuntime({ redisUrl: REDIS_URL, prefix: h.prefix });
    expect((await plain.shardLayout()).count).toBe(4);
    await plain.close();

    // A deployment with data under the single tag and no stored count: one shard.
    const old = randomPrefix();
    const legacy = makeKeys(old);
    await redis.zadd(legacy.machines, 0, "kept");
    const upgraded = createRedisRuntime({ redisUrl: REDIS_URL, prefix: old });
    try {
      expect((await upgraded.shardLayout()).count).toBe(1);
      expect(await redis.get(legacy.shardCount)).toBe("1");
      // It runs as before, every key under the single tag.
      await h.startWorker({ prefix: old, shards: undefined });
      await createMachine(upgraded, "kept", {
        StartAt: "Done",
        States: { Done: { Type: "Pass", End: true } },
      });
      const { executionId } = await upgraded.startExecution("kept", { name: "old" });
      expect(await upgraded.waitForExecution(executionId, 10_000)).toMatchObject({
        status: "SUCCEEDED",
      });
      expect(await redis.exists(legacy.execution(shortId(executionId)))).toBe(1);
    } finally {
      await upgraded.close();
      await deleteKeys(REDIS_URL, old);
    }
  });
});
