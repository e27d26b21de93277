// Approval inbox listing: page latency with N pending approvals (default 10,000).
// Run: npx tsx bench/approvals.ts [N]. Uses REDIS_URL under a random key prefix,
// removed at the end. Target: < 50 ms per page.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { createRedisRuntime } from "../runtime/runtime.js";
import { startWorker } from "../runtime/worker/worker.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const N = Number(process.argv[2] ?? 10_000);

function pct(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

const prefix = `bench-approvals-${randomBytes(4).toString("hex")}`;
const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
const worker = await startWorker({ redisUrl: REDIS_URL, prefix, onError: () => undefined });
const redis = new Redis(REDIS_URL);
try {
  await runtime.createStateMachine("pay", {
    StartAt: "Ask",
    States: {
      Ask: {
        Type: "Task",
        Resource: "stepwise:approval",
        Parameters: {
          Subject: "Pay an invoice",
          "Details.$": "$",
          // Half the approvals name finance, half legal: the group index halves the set.
          "Approvers.$": "$.approvers",
        },
        End: true,
      },
    },
  });
  const t0 = Date.now();
  for (let i = 0; i < N; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, N - i) }, (_, k) =>
        runtime.startExecution("pay", {
          name: `e${i + k}`,
          input: {
            invoice: i + k,
            amount: (i + k) * 10,
            approvers: [(i + k) % 2 ? "finance" : "legal"],
          },
        }),
      ),
    );
  }
  // One pending index per shard (runtime/shards/shards.ts).
  const shards = (await runtime.shardLayout()).shards;
  const pending = async (): Promise<number> =>
    (
      await Promise.all(shards.map((k) => redis.zcard(k.approvalIndex("PENDING", "*", "*"))))
    ).reduce((a, b) => a + b, 0);
  while ((await pending()) < N) await new Promise((r) => setTimeout(r, 100));
  console.log(`${N} pending approvals created in ${((Date.now() - t0) / 1000).toFixed(1)} s`);

  for (const [label, filter, limit] of [
    ["status=PENDING, limit=100", { status: "PENDING" as const }, 100],
    [
      "status=PENDING&approver=finance, limit=100",
      { status: "PENDING" as const, approver: "finance" },
      100,
    ],
    ["all statuses, limit=1000", {}, 1000],
  ] as const) {
    const times: number[] = [];
    let cursor: string | undefined;
    let seen = 0;
    do {
      const start = performance.now();
      const page = await runtime.listApprovals({ ...filter, limit, ...(cursor ? { cursor } : {}) });
      times.push(performance.now() - start);
      seen += page.items.length;
      cursor = page.nextCursor;
    } while (cursor);
    console.log(
      `${label}: ${times.length} pages, ${seen} records; per page p50 ${pct(times, 50).toFixed(1)} ms, p99 ${pct(times, 99).toFixed(1)} ms, max ${Math.max(...times).toFixed(1)} ms`,
    );
  }
} finally {
  await worker.close();
  await runtime.close();
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) await redis.unlink(...keys);
  } while (cursor !== "0");
  redis.disconnect();
}
