import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { afterAll, beforeEach, describe, expect, it } from "vitest";
import { eventTemplate, valueTemplate } from "../../runtime/store/event-template.js";
import { stepJob, taskJob } from "../../runtime/store/job-ids.js";
import { makeKeys, type Keys } from "../../runtime/store/keys.js";
import { RedisClient } from "../../runtime/store/redis.js";
import {
  commitTransition,
  type CommitArgs,
  type CommitOp,
  type CommitReply,
} from "../../runtime/store/scripts/commit-transition.js";
import { commitKeys } from "../../runtime/commit/transition.js";
import { deleteKeys } from "../e2e/stack.js";
import { commitArgs, HEAD } from "./commit-fixture.js";

// Every op of commitTransition, run against Redis: what crosses the seam is one
// typed map (runtime/store/wire.ts), and this is where each kind is seen to do what its
// type says. The table below is keyed by op: an op added without a test here
// does not compile.

const url = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const redis = new Redis(url);
const client = new RedisClient(url);
let keys: Keys;
let prefix: string;
const RUN = "m:e";
const CHILD = "m:e/1/0";

afterAll(async () => {
  await client.close();
  redis.disconnect();
});

beforeEach(async (context) => {
  prefix = `t${randomBytes(6).toString("hex")}`;
  keys = makeKeys(prefix);
  context.onTestFinished(() => deleteKeys(redis, prefix));
  await redis.hset(keys.run(RUN), "q", 0);
  await redis.rpush(keys.inbox(RUN), HEAD);
  await redis.hset(keys.execution(RUN), "st", "RUNNING", "hc", 0, "hh", "g");
  await redis.zadd(keys.executionsByStatus("RUNNING"), 1, RUN);
});

function commit(ops: CommitOp[], args: Partial<CommitArgs> = {}): Promise<CommitReply> {
  return client.call(commitTransition, commitKeys(keys, RUN), commitArgs(keys, RUN, ops, args));
}

async function committed(ops: CommitOp[]): Promise<Extract<CommitReply, { kind: "committed" }>> {
  const reply = await commit(ops);
  if (reply.kind !== "committed") throw new Error(`not committed: ${JSON.stringify(reply)}`);
  return reply;
}

async function childRun(run = CHILD): Promise<void> {
  await redis.hset(keys.run(run), "q", 4);
}

const opTests: Record<CommitOp["op"], () => Promise<void>> = {
  async push() {
    await childRun();
    await redis.rpush(keys.inbox(CHILD), "a");
    const reply = await committed([
      { op: "push", run: CHILD, event: "b" },
      { op: "push", run: CHILD, event: "front", front: true },
      { op: "push", run: "m:e/9/9", event: "lost" },
      { op: "push", run: RUN, event: "next" },
    ]);
    expect(await redis.lrange(keys.inbox(CHILD), 0, -1)).toEqual(["front", "a", "b"]);
    expect(await redis.exists(keys.inbox("m:e/9/9"))).toBe(0);
    expect(reply.fx.split(" ").sort()).toEqual([stepJob(CHILD, 4), stepJob(RUN, 1)].sort());
    expect(reply.head).toBe("next");
    expect(await redis.zscore(keys.schedule, `r:${CHILD}`)).toBe("1500");
  },
  async spawn() {
    const reply = await committed([{ op: "spawn", run: CHILD, state: '{"c":1}', started: "S" }]);
    expect(await redis.hget(keys.run(CHILD), "q")).toBe("0");
    expect(await redis.hget(keys.run(CHILD), "s1")).toBe('{"c":1}');
    expect(await redis.lrange(keys.inbox(CHILD), 0, -1)).toEqual(["S"]);
    expect(reply.fx).toBe(stepJob(CHILD, 0));
  },
  async spawnKept() {
    await redis.hset(keys.joinInputs("m:e/1"), "0", '{"kept":true}', "1", "2");
    const started = eventTemplate({ type: "Started", input: null }, "input");
    await committed([
      { op: "spawnKept", run: CHILD, state: "{}", join: "m:e/1", index: 0, started },
    ]);
    expect(JSON.parse((await redis.lindex(keys.inbox(CHILD), 0))!)).toEqual({
      type: "Started",
      input: { kept: true },
    });
    expect(await redis.hkeys(keys.joinInputs("m:e/1"))).toEqual(["1"]);
  },
  async arm() {
    await committed([{ op: "arm", member: "t:m:e#w", at: 1_733_081_234_567 }]);
    expect(await redis.zscore(keys.schedule, "t:m:e#w")).toBe("1733081234567");
    expect(await redis.hget(keys.stats, "timers")).toBe("1");
  },
  async disarm() {
    await redis.zadd(keys.schedule, 5, "t:m:e#w");
    await redis.hset(keys.stats, "timers", 1);
    await committed([
      { op: "disarm", member: "t:m:e#w" },
      { op: "disarm", member: "t:m:e#never" },
    ]);
    expect(await redis.zscore(keys.schedule, "t:m:e#w")).toBeNull();
    expect(await redis.hget(keys.stats, "timers")).toBe("0");
  },
  async task() {
    const reply = await committed([
      { op: "task", task: "m:e#1", record: "{}", mode: "call" },
      { op: "task", task: "m:e#2", record: "{}", mode: "activity", token: "tk2", activity: "act" },
      { op: "task", task: "m:e#3", record: "{}", mode: "park", token: "tk3" },
    ]);
    expect(await redis.hgetall(keys.tasks)).toEqual({
      "m:e#1": "{}",
      "m:e#2": "{}",
      "m:e#3": "{}",
    });
    expect(await redis.hgetall(keys.tokens)).toEqual({ tk2: "m:e#2", tk3: "m:e#3" });
    expect(await redis.lrange(keys.activity("act"), 0, -1)).toEqual(["m:e#2"]);
    expect(await redis.zscore(keys.schedule, "k:m:e#1")).toBe("1500");
    expect(await redis.zscore(keys.schedule, "k:m:e#3")).toBeNull();
    expect(reply.fx).toBe(taskJob("m:e#1"));
  },
  async chunkTask() {
    await redis.hset(keys.joinInputs("m:e/1"), "0", "1", "1", '{"b":2}', "2", "3");
    const record = valueTemplate((hole) => ({ input: { from: 0, inputs: hole } }));
    const reply = await committed([
      { op: "chunkTask", task: "m:e/1#c0", record, join: "m:e/1", from: 0, count: 2 },
    ]);
    expect(JSON.parse((await redis.hget(keys.tasks, "m:e/1#c0"))!)).toEqual({
      input: { from: 0, inputs: [1, { b: 2 }] },
    });
    // Taken out of the window's keeping: a later chunk gets the rest.
    expect(await redis.hkeys(keys.joinInputs("m:e/1"))).toEqual(["2"]);
    expect(await redis.zscore(keys.schedule, "k:m:e/1#c0")).toBe("1500");
    expect(reply.fx).toBe(taskJob("m:e/1#c0"));
  },
  async untask() {
    await redis.hset(keys.tasks, "m:e#2", JSON.stringify({ token: "tk2", activity: "act" }));
    await redis.hset(keys.tokens, "tk2", "m:e#2");
    await redis.rpush(keys.activity("act"), "m:e#2");
    await redis.zadd(keys.schedule, 5, "k:m:e#2");
    await committed([{ op: "untask", task: "m:e#2", why: "timedout" }]);
    expect(await redis.exists(keys.tasks, keys.tokens, keys.activity("act"))).toBe(0);
    expect(await redis.get(keys.tombstone("tk2"))).toBe("timedout");
    expect(await redis.ttl(keys.tombstone("tk2"))).toBeGreaterThan(50);
    expect(await redis.zscore(keys.schedule, "k:m:e#2")).toBeNull();
  },
  async end() {
    await redis.hset(keys.stats, "RUNNING", 1, "timers", 1);
    await redis.zadd(keys.schedule, 9, "t:m:e#timeout");
    const ended = new Redis(url);
    const heard: string[] = [];
    await ended.subscribe(keys.endedChannel);
    ended.on("message", (_channel, message: string) => heard.push(message));
    await committed([
      {
        op: "end",
        exec: RUN,
        status: "SUCCEEDED",
        output: '{"ok":1}',
        stoppedAt: "2026-12-01T00:00:00.000Z",
        timeoutMember: "t:m:e#timeout",
        keepSeconds: 100,
      },
    ]);
    await new Promise((resolve) => setTimeout(resolve, 50));
    ended.disconnect();
    const record = await redis.hgetall(keys.execution(RUN));
    expect(record).toMatchObject({
      st: "SUCCEEDED",
      out: '{"ok":1}',
      t1: "2026-12-01T00:00:00.000Z",
    });
    expect(record.err).toBeUndefined();
    expect(await redis.hgetall(keys.stats)).toEqual({ RUNNING: "0", SUCCEEDED: "1", timers: "0" });
    expect(await redis.zscore(keys.executionsByStatus("SUCCEEDED"), RUN)).toBe("1");
    expect(await redis.ttl(keys.execution(RUN))).toBeGreaterThan(90);
    expect(await redis.ttl(keys.journal(RUN))).toBeGreaterThan(90);
    expect(heard).toEqual([RUN]);
    // The run stays: a failure could be redriven from it.
    expect(await redis.hget(keys.run(RUN), "q")).toBe("1");
  },
  async expire() {
    await committed([{ op: "expire", seconds: 77 }]);
    expect(await redis.ttl(keys.run(RUN))).toBeGreaterThan(70);
  },
  async keepInput() {
    await committed([{ op: "keepInput", version: "v1", input: "[1,2]" }]);
    expect(await redis.hmget(keys.run(RUN), "iv", "in")).toEqual(["v1", "[1,2]"]);
  },
  async dropInput() {
    await redis.hset(keys.run(RUN), "iv", "v1", "in", "[]");
    await committed([{ op: "dropInput" }]);
    expect(await redis.hmget(keys.run(RUN), "iv", "in")).toEqual([null, null]);
  },
  async joined() {
    const parent = "m:p";
    await redis.hset(keys.run(parent), "q", 3);
    const op: CommitOp = {
      op: "joined",
      join: "m:p/1",
      index: 2,
      output: '"out"',
      parent,
      event: "ChildEnded",
      keepSeconds: 50,
    };
    const reply = await committed([op]);
    expect(reply.fx).toBe(stepJob(parent, 3));
    // Delivered once: a second end of the same child (a redelivery) keeps the first.
    await redis.rpush(keys.inbox(RUN), HEAD);
    expect((await commit([{ ...op, output: '"again"' }], { seq: 1 })).kind).toBe("committed");
    expect(await redis.hgetall(keys.joinResults("m:p/1"))).toEqual({ "2": '"out"' });
    expect(await redis.lrange(keys.inbox(parent), 0, -1)).toEqual(["ChildEnded"]);
    expect(await redis.ttl(keys.joinResults("m:p/1"))).toBeGreaterThan(40);
  },
  async stopJoin() {
    await childRun("m:e/1/0");
    await childRun("m:e/1/1");
    await redis.hset(keys.joinResults("m:e/1"), "1", "null");
    await redis.hset(keys.joinInputs("m:e/1"), "5", "{}");
    const reply = await committed([
      { op: "stopJoin", join: "m:e/1", started: 3, event: '{"type":"Stop"}' },
    ]);
    expect(await redis.lrange(keys.inbox("m:e/1/0"), 0, -1)).toEqual(['{"type":"Stop"}']);
    expect(await redis.exists(keys.inbox("m:e/1/1"), keys.inbox("m:e/1/2"))).toBe(0);
    expect(await redis.exists(keys.joinInputs("m:e/1"))).toBe(0);
    expect(reply.fx).toBe(stepJob("m:e/1/0", 4));
  },
  async keepOutputs() {
    await redis.hset(keys.joinResults("m:e/1"), "0", "first");
    await committed([
      {
        op: "keepOutputs",
        join: "m:e/1",
        outputs: [
          [0, "second"],
          [1, "b"],
        ],
        keepSeconds: 0,
      },
    ]);
    expect(await redis.hgetall(keys.joinResults("m:e/1"))).toEqual({ "0": "first", "1": "b" });
  },
  async keepInputs() {
    const inputs = Array.from({ length: 1_203 }, (_, i) => String(i));
    await committed([{ op: "keepInputs", join: "m:e/1", from: 10, inputs, keepSeconds: 30 }]);
    const kept = await redis.hgetall(keys.joinInputs("m:e/1"));
    expect(Object.keys(kept)).toHaveLength(1_203);
    expect([kept["10"], kept["1212"]]).toEqual(["0", "1202"]);
    expect(await redis.ttl(keys.joinInputs("m:e/1"))).toBeGreaterThan(20);
  },
  async collect() {
    await redis.hset(keys.joinResults("m:e/1"), "0", '"a"', "2", '{"c":3}');
    const event = eventTemplate(
      { type: "ResultsCollected", prefix: "arn:x/1", outputs: [] },
      "outputs",
    );
    const reply = await committed([{ op: "collect", join: "m:e/1", total: 3, event }]);
    expect(JSON.parse(reply.head!)).toEqual({
      type: "ResultsCollected",
      prefix: "arn:x/1",
      outputs: ["a", null, { c: 3 }],
    });
    expect(await redis.exists(keys.joinResults("m:e/1"))).toBe(0);
  },
  async approval() {
    await committed([
      { op: "approval", id: "ap1", fields: ["st", "PENDING", "ix", "g|m", "t0", "7", "nt", "0"] },
    ]);
    expect(await redis.hget(keys.approval("ap1"), "st")).toBe("PENDING");
    expect(await redis.zscore(keys.approvalIndex("PENDING", "g", "m"), "ap1")).toBe("7");
    expect(await redis.xlen(keys.approvalFeed)).toBe(1);
  },
  async closeApproval() {
    await redis.hset(keys.approval("ap1"), "st", "PENDING", "ix", "g|m", "t0", 7);
    await committed([{ op: "closeApproval", id: "ap1", status: "EXPIRED" }]);
    expect(await redis.hget(keys.approval("ap1"), "st")).toBe("EXPIRED");
    expect(await redis.zscore(keys.approvalIndex("EXPIRED", "g", "m"), "ap1")).toBe("7");
    expect(await redis.zscore(keys.approvalIndex("PENDING", "g", "m"), "ap1")).toBeNull();
  },
  async noticeApproval() {
    await redis.hset(keys.approval("ap1"), "st", "PENDING", "ix", "g|m", "t0", 7);
    // Not pending: nothing happens.
    await redis.hset(keys.approval("ap2"), "st", "APPROVED", "ix", "g|m", "t0", 7);
    await committed([
      { op: "noticeApproval", id: "ap1", event: "approval.reminder", groups: [] },
      { op: "noticeApproval", id: "ap1", event: "approval.escalated", groups: ["leads", "x"] },
      { op: "noticeApproval", id: "ap1", event: "approval.escalated", groups: ["leads"] },
      { op: "noticeApproval", id: "ap2", event: "approval.reminder", groups: ["y"] },
    ]);
    expect(JSON.parse((await redis.hget(keys.approval("ap1"), "as"))!)).toEqual({
      escalatedTo: ["leads", "x"],
    });
    expect(await redis.hget(keys.approval("ap2"), "as")).toBeNull();
    // Indexed under the escalation's groups, once each.
    expect(await redis.zscore(keys.approvalIndex("PENDING", "leads", "*"), "ap1")).toBe("7");
    expect(await redis.zscore(keys.approvalIndex("*", "x", "*"), "ap1")).toBe("7");
    expect(await redis.hget(keys.approval("ap1"), "ix")).toBe("g|m leads|* x|*");
    const feed = await redis.xrange(keys.approvalFeed, "-", "+");
    expect(feed.map(([, f]) => `${f[1]} ${f[3]}`)).toEqual([
      "approval.reminder ap1",
      "approval.escalated ap1",
      "approval.escalated ap1",
    ]);
  },
  async usage() {
    await committed([
      { op: "usage", field: "mu", amount: "0.1" },
      { op: "usage", field: "mu", amount: "0.2" },
    ]);
    expect(await redis.hget(keys.execution(RUN), "mu")).toBe("0.3");
  },
  async childExecution() {
    // A Distributed Map's item run (spawned with its `owner`) writes its child
    // execution's record and history, never its execution's.
    const owner = "m/L:mr1-0";
    await committed([{ op: "spawn", run: CHILD, state: "{}", started: "S", owner }]);
    expect(await redis.hget(keys.run(CHILD), "ho")).toBe(owner);
    const reply = await client.call(
      commitTransition,
      commitKeys(keys, CHILD),
      commitArgs(
        keys,
        CHILD,
        [{ op: "childExecution", fields: ["st", "RUNNING", "nm", "mr1-0"], mapRun: "mr1", at: 7 }],
        {
          seq: 0,
          head: "S",
          events: ["c1"],
          historyCount: 0,
          historyHead: "",
          newHistoryHead: "c1h",
        },
      ),
    );
    expect(reply.kind).toBe("committed");
    expect(await redis.lrange(keys.history(owner), 0, -1)).toEqual(["c1"]);
    expect(await redis.hmget(keys.execution(owner), "st", "nm", "hc", "hh")).toEqual([
      "RUNNING",
      "mr1-0",
      "1",
      "c1h",
    ]);
    expect(await redis.zrange(`${keys.base}mrc:mr1`, "0", "-1", "WITHSCORES")).toEqual([
      owner,
      "7",
    ]);
    expect(await redis.hget(keys.execution(RUN), "hc")).toBe("0");
    expect(await redis.llen(keys.history(RUN))).toBe(0);
    // Its end: fields set and cleared, and its keys expire; a redrive keeps them again.
    await redis.hset(keys.execution(owner), "err", "E");
    const end = (clear: string[], more: Partial<CommitOp>) =>
      client.call(
        commitTransition,
        commitKeys(keys, CHILD),
        commitArgs(
          keys,
          CHILD,
          [{ op: "childExecution", fields: ["st", "SUCCEEDED"], clear, ...more } as CommitOp],
          {
            seq: Number(0),
            head: "S",
          },
        ),
      );
    await redis.hset(keys.run(CHILD), "q", 0);
    await redis.lpush(keys.inbox(CHILD), "S");
    expect((await end(["err"], { keepSeconds: 100 })).kind).toBe("committed");
    expect(await redis.hmget(keys.execution(owner), "st", "err")).toEqual(["SUCCEEDED", null]);
    expect(await redis.ttl(keys.execution(owner))).toBeGreaterThan(50);
    expect(await redis.ttl(keys.history(owner))).toBeGreaterThan(50);
    await redis.hset(keys.run(CHILD), "q", 0);
    await redis.lpush(keys.inbox(CHILD), "S");
    expect((await end([], { persist: true })).kind).toBe("committed");
    expect(await redis.ttl(keys.execution(owner))).toBe(-1);
    expect(await redis.ttl(keys.history(owner))).toBe(-1);
  },
};

describe("commitTransition ops, against Redis", () => {
  for (const [op, test] of Object.entries(opTests)) it(op, test);
});

describe("commitTransition replies", () => {
  it("committed: the new seq, the run state and journal written, the inbox popped", async () => {
    const reply = await commit([], {
      events: ["e1", "e2"],
      historyCount: 0,
      historyHead: "g",
      newHistoryHead: "h2",
    });
    expect(reply).toEqual({ kind: "committed", seq: 1, fx: "" });
    expect(await redis.hmget(keys.run(RUN), "q", "s1")).toEqual(["1", '{"s":1}']);
    expect(await redis.lrange(keys.history(RUN), 0, -1)).toEqual(["e1", "e2"]);
    expect(await redis.lrange(keys.journal(RUN), 0, -1)).toEqual(['{"j":1}']);
    expect(await redis.hmget(keys.execution(RUN), "hc", "hh")).toEqual(["2", "h2"]);
    expect(await redis.llen(keys.inbox(RUN))).toBe(0);
  });

  it("end with dropRun: the run's hash, inbox and lease go with the commit", async () => {
    await redis.hset(keys.stats, "RUNNING", 1);
    await redis.rpush(keys.inbox(RUN), '{"type":"ChildEnded"}');
    const reply = await commit([
      {
        op: "end",
        exec: RUN,
        status: "SUCCEEDED",
        output: "1",
        stoppedAt: "2026-12-01T00:00:00.000Z",
        timeoutMember: "t:m:e#timeout",
        keepSeconds: 0,
        dropRun: true,
      },
    ]);
    expect(reply).toEqual({ kind: "committed", seq: 1, fx: "" });
    expect(await redis.exists(keys.run(RUN), keys.inbox(RUN))).toBe(0);
    expect(await redis.zscore(keys.schedule, `r:${RUN}`)).toBeNull();
    expect(await redis.hget(keys.execution(RUN), "st")).toBe("SUCCEEDED");
  });

  it("end without a timeout member, of a paused execution: no timer to drop, all fields set, unpaused", async () => {
    await redis.hset(keys.stats, "RUNNING", 0, "PAUSED", 1, "timers", 1);
    await redis.hset(keys.execution(RUN), "ps", "1");
    await redis.zadd(keys.executionsByStatus("PAUSED"), 1, RUN);
    await redis.zrem(keys.executionsByStatus("RUNNING"), RUN);
    // Someone else's timer: an end without a member must leave it alone.
    await redis.zadd(keys.schedule, 9, "t:m:other#timeout");
    await commit([
      {
        op: "end",
        exec: RUN,
        status: "FAILED",
        error: "E",
        cause: "C",
        stoppedAt: "2026-12-01T00:00:00.000Z",
        keepSeconds: 100,
        dropRun: true,
      },
    ]);
    expect(await redis.hgetall(keys.execution(RUN))).toMatchObject({
      st: "FAILED",
      err: "E",
      cause: "C",
      t1: "2026-12-01T00:00:00.000Z",
    });
    expect(await redis.hget(keys.execution(RUN), "ps")).toBeNull();
    expect(await redis.hgetall(keys.stats)).toEqual({
      RUNNING: "0",
      PAUSED: "0",
      FAILED: "1",
      timers: "1",
    });
    expect(await redis.zscore(keys.schedule, "t:m:other#timeout")).toBe("9");
    expect(await redis.zscore(keys.executionsByStatus("FAILED"), RUN)).toBe("1");
    expect(await redis.ttl(keys.execution(RUN))).toBeGreaterThan(90);
    expect(await redis.ttl(keys.journal(RUN))).toBeGreaterThan(90);
    expect(await redis.exists(keys.run(RUN), keys.inbox(RUN))).toBe(0);
  });

  it("payloads: each is set where absent, and takes the retention of an ended execution", async () => {
    await redis.hset(keys.payloads(RUN), "a", "kept");
    await commit([], { payloads: { a: "other", b: "new" } });
    expect(await redis.hgetall(keys.payloads(RUN))).toEqual({ a: "kept", b: "new" });
    expect(await redis.ttl(keys.payloads(RUN))).toBe(-1);
    await redis.expire(keys.execution(RUN), 500);
    await redis.rpush(keys.inbox(RUN), HEAD);
    await commit([], { seq: 1, payloads: { c: "late" } });
    expect(await redis.ttl(keys.payloads(RUN))).toBeGreaterThan(490);
  });

  it("journal: one entry per step, in order", async () => {
    await commit([], { journal: ['{"j":1}', '{"j":2}', '{"j":3}'], alone: true });
    expect(await redis.lrange(keys.journal(RUN), 0, -1)).toEqual(['{"j":1}', '{"j":2}', '{"j":3}']);
  });

  it("crowded: a batch asked to be alone, with events behind its head, writes nothing", async () => {
    await redis.rpush(keys.inbox(RUN), '{"type":"TimerFired"}');
    expect(await commit([], { alone: true, events: ["e"] })).toEqual({ kind: "crowded" });
    expect(await redis.llen(keys.inbox(RUN))).toBe(2);
    expect(await redis.llen(keys.journal(RUN))).toBe(0);
    expect(await redis.llen(keys.history(RUN))).toBe(0);
    // One step at a time goes through.
    expect(await commit([])).toMatchObject({ kind: "committed", head: '{"type":"TimerFired"}' });
  });

  it("stale: a commit from a seq the run is past", async () => {
    await redis.hset(keys.run(RUN), "q", 5, "fx", stepJob(RUN, 5));
    expect(await commit([])).toEqual({ kind: "stale", seq: 5, fx: stepJob(RUN, 5) });
  });

  it("raced: another run of the execution wrote history first (and whether it is paused)", async () => {
    await redis.hset(keys.execution(RUN), "hc", 3, "hh", "h3", "ps", "{}");
    expect(await commit([], { events: ["e"] })).toEqual({
      kind: "raced",
      historyCount: 3,
      historyHead: "h3",
      paused: true,
    });
    expect(await redis.llen(keys.history(RUN))).toBe(0);
  });

  it("headChanged: a stop went in front of the event the step consumed", async () => {
    await redis.lpush(keys.inbox(RUN), '{"type":"Stop"}');
    expect(await commit([])).toEqual({ kind: "headChanged" });
  });

  it("missing: no such run", async () => {
    await redis.del(keys.run(RUN));
    expect(await commit([])).toEqual({ kind: "missing" });
  });

  it("an unknown op, or one without a field it needs, is refused before anything is written", async () => {
    // A commit whose every earlier step writes: history, payloads, the inbox pop,
    // the journal, and an op (arm: the schedule and the timer count) before the bad one.
    const arm: CommitOp = { op: "arm", member: "t:m:e#w", at: 5 };
    const writes: Partial<CommitArgs> = {
      events: ["e1"],
      newHistoryHead: "h1",
      payloads: { a: "text" },
    };
    const before = await snapshot();
    expect(Object.keys(before).length).toBeGreaterThanOrEqual(4);
    await expect(commit([arm, { op: "bogus" } as unknown as CommitOp], writes)).rejects.toThrow(
      /unknown op bogus \(op 2\); nothing written/,
    );
    expect(await snapshot()).toEqual(before);
    const noEvent = { op: "push", run: CHILD } as unknown as CommitOp;
    await expect(commit([arm, noEvent], writes)).rejects.toThrow(
      /op 2 \(push\): event is nil, not string/,
    );
    expect(await snapshot()).toEqual(before);
    const noActivity: CommitOp = { op: "task", task: "m:e#1", record: "{}", mode: "activity" };
    await expect(commit([arm, noActivity], writes)).rejects.toThrow(/names no activity/);
    expect(await snapshot()).toEqual(before);
    // The snapshot sees what a commit writes: the same commit without the bad op.
    expect((await commit([arm], writes)).kind).toBe("committed");
    expect(await snapshot()).not.toEqual(before);
  });
});

/**
 * Every key under the test's prefix: its DUMP (type, value and encoding) and
 * whether it expires. Equal snapshots: nothing was written in between.
 */
async function snapshot(): Promise<Record<string, { dump: string; expires: boolean }>> {
  const keys: string[] = [];
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== "0");
  const snapshot: Record<string, { dump: string; expires: boolean }> = {};
  for (const key of keys.sort()) {
    const dump = await redis.dumpBuffer(key);
    snapshot[key] = { dump: dump.toString("base64"), expires: (await redis.pttl(key)) >= 0 };
  }
  return snapshot;
}
