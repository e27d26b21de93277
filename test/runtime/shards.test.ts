import { describe, expect, it } from "vitest";
import { executionArn } from "../../runtime/store/ids.js";
import { makeKeys } from "../../runtime/store/keys.js";
import { mergeApprovalPages, mergePages } from "../../runtime/shards/shard-rooms.js";
import {
  servedShards,
  ShardLayout,
  shardOfExecution,
  shardsFromEnv,
  workerShardsFromEnv,
} from "../../runtime/shards/shards.js";
import type { ApprovalRecord, ExecutionSummary } from "../../runtime/contract/index.js";
import { decodeCursor } from "../../runtime/store/canonical.js";

describe("the shard of an execution", () => {
  it("is pinned: a changed hash would look for every stored execution on the wrong shard", () => {
    expect(shardOfExecution("orders:first", 16)).toBe(8);
    expect(shardOfExecution("orders:second", 16)).toBe(14);
    expect(shardOfExecution("agent:run-42", 16)).toBe(6);
    expect(shardOfExecution("wide:é-ünïcode", 16)).toBe(9);
    expect(shardOfExecution("orders:first", 1024)).toBe(616);
  });

  it("spreads ids evenly, and keeps a run, task or timer with its execution", () => {
    const counts = new Array<number>(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[shardOfExecution(`m:e${i}`, 16)]!++;
    for (const n of counts) {
      expect(n).toBeGreaterThan(850);
      expect(n).toBeLessThan(1150);
    }
    const layout = new ShardLayout("p", 16);
    const exec = "orders:first";
    for (const child of [`${exec}/3/0`, `${exec}/3/0/1/7`, `${exec}#timeout`, `${exec}/2/1#4`])
      expect(layout.shardOf(child)).toBe(layout.shardOf(exec));
    expect(new ShardLayout("p", 1).shardOf(exec)).toBe(0);
  });

  it("of a token is its mark; a token without one, or with a shard the deployment lacks, has none", () => {
    const four = new ShardLayout("p", 4);
    expect(four.shardOfToken("s3-AAAAAAAAAAAAAAAAAAAAAA")).toBe(3);
    expect(four.shardOfToken("s4-AAAAAAAAAAAAAAAAAAAAAA")).toBeUndefined();
    expect(four.shardOfToken("AAAAAAAAAAAAAAAAAAAAAA")).toBeUndefined();
    expect(new ShardLayout("p", 1).shardOfToken("s3-AAAAAAAAAAAAAAAAAAAAAA")).toBe(0);
    expect(four.shards[2]!.tokenPrefix).toBe("s2-");
    expect(new ShardLayout("p", 1).shards[0]!.tokenPrefix).toBe("");
  });
});

describe("shard keys", () => {
  it("of one shard are the single-tag layout of before shards; of several, one tag each, control under {sw}", () => {
    const one = makeKeys("p");
    expect(one.execution("m:e")).toBe("p:{sw}:x:m:e");
    expect(one.bullPrefix).toBe("p:{sw}");
    const third = makeKeys("p", 2, 4);
    expect(third.execution("m:e")).toBe("p:{sw:2}:x:m:e");
    expect(third.schedule).toBe("p:{sw:2}:sched");
    expect(third.bullPrefix).toBe("p:{sw:2}");
    expect(third.endedChannel).toBe("p:{sw:2}:ended");
    // What belongs to no execution stays under the control tag, whatever the shard.
    expect(third.machine("m")).toBe(one.machine("m"));
    expect(third.activities).toBe(one.activities);
    expect(third.operation("op_1")).toBe(one.operation("op_1"));
    expect(third.shardCount).toBe("p:{sw}:shards");
    expect(() => makeKeys("p", 4, 4)).toThrow(/shard 4 is not one of 4/);
  });
});

describe("settings", () => {
  it("name the variable when they are malformed", () => {
    expect(shardsFromEnv(undefined)).toBeUndefined();
    expect(shardsFromEnv("8")).toBe(8);
    for (const bad of ["0", "1.5", "x", "4096"])
      expect(() => shardsFromEnv(bad)).toThrow(/STEPWISE_SHARDS/);
    expect(workerShardsFromEnv("0-2,7, 5")).toEqual([0, 1, 2, 5, 7]);
    expect(workerShardsFromEnv("")).toBeUndefined();
    for (const bad of ["a", "3-1", "1,,2"]) {
      expect(() => workerShardsFromEnv(bad)).toThrow(/STEPWISE_WORKER_SHARDS/);
    }
    expect(servedShards(4, undefined)).toEqual([0, 1, 2, 3]);
    expect(() => servedShards(4, [1, 4])).toThrow(
      /names shard 4, but the deployment has 4 \(0-3\)/,
    );
  });
});

describe("merged pages", () => {
  const summary = (name: string, ms: number): ExecutionSummary => ({
    executionId: executionArn("m", name),
    name,
    stateMachine: "m",
    version: 1,
    status: "SUCCEEDED",
    startedAt: new Date(ms).toISOString(),
  });

  it("are newest first, equal start times by id bytes (as Redis orders them), with the last item as cursor", () => {
    const page = mergePages(
      [
        { items: [summary("b", 3000), summary("é", 1000)] },
        { items: [summary("c", 2000), summary("a", 1000)], nextCursor: "more" },
        { items: [] },
      ],
      3,
    );
    // "é" is 0xC3 0xA9 in UTF-8: after "a" by bytes, so first among equals when descending.
    expect(page.items.map((i) => i.name)).toEqual(["b", "c", "é"]);
    expect(decodeCursor(page.nextCursor!)).toEqual({ s: 1000, m: "m:é" });
  });

  it("end when every shard's page ended and nothing was cut", () => {
    const page = mergePages([{ items: [summary("b", 3000)] }, { items: [summary("a", 1000)] }], 5);
    expect(page.items.map((i) => i.name)).toEqual(["b", "a"]);
    expect(page.nextCursor).toBeUndefined();
  });

  it("of approvals carry the inbox's cursor kind", () => {
    const approval = (id: string, ms: number) =>
      ({ approvalId: id, createdAt: new Date(ms).toISOString() }) as ApprovalRecord;
    const page = mergeApprovalPages(
      [
        { items: [approval("ap_b", 2000)] },
        { items: [approval("ap_a", 2000), approval("ap_c", 1)] },
      ],
      2,
    );
    expect(page.items.map((a) => a.approvalId)).toEqual(["ap_b", "ap_a"]);
    expect(decodeCursor(page.nextCursor!)).toEqual({ k: "ap", s: 2000, m: "ap_a" });
  });
});
