import type { ExecutionStatus, RuntimeMetrics } from "./contract.js";
import type { Keys } from "./keys.js";
import type { JobQueues } from "./queues.js";
import type { RedisClient } from "./redis.js";

/** BullMQ job states worth watching; completed and failed jobs are removed at once (queues.ts). */
const JOB_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children"] as const;

const STATUSES: readonly ExecutionStatus[] = [
  "RUNNING",
  "SUCCEEDED",
  "FAILED",
  "TIMED_OUT",
  "ABORTED",
];

/** Executions read per round trip when counting statuses. */
const BATCH = 1000;

/**
 * Reads the runtime's figures for /metrics from Redis, once per scrape.
 *
 * Counting executions by status reads every indexed execution's status: nothing
 * keeps a running count (that would belong in the start and commit scripts). The
 * index holds only executions within retention, and the reads go in pipelined
 * batches: a scrape costs one round trip per thousand executions.
 */
export async function readRuntimeMetrics(
  client: RedisClient,
  keys: Keys,
  queues: JobQueues,
): Promise<Omit<RuntimeMetrics, "executionsStartedTotal">> {
  const [executionsByStatus, steps, tasks, pendingTimers, pendingTaskTokens] = await Promise.all([
    countByStatus(client, keys),
    queues.steps.getJobCounts(...JOB_STATES),
    queues.tasks.getJobCounts(...JOB_STATES),
    countTimers(client, keys),
    client.redis.hlen(keys.tokens),
  ]);
  return {
    executionsByStatus,
    queueDepth: { steps, tasks },
    pendingTimers,
    pendingTaskTokens,
  };
}

async function countByStatus(
  client: RedisClient,
  keys: Keys,
): Promise<Record<ExecutionStatus, number>> {
  const counts = Object.fromEntries(STATUSES.map((s) => [s, 0])) as Record<ExecutionStatus, number>;
  for (let offset = 0; ; offset += BATCH) {
    const batch = await client.redis.zrange(
      keys.executions,
      String(offset),
      String(offset + BATCH - 1),
    );
    if (batch.length === 0) break;
    const pipeline = client.redis.pipeline();
    for (const exec of batch) pipeline.hget(keys.execution(exec), "st");
    for (const [, status] of (await pipeline.exec()) ?? []) {
      // An execution past retention may linger in the index until it is pruned.
      if (typeof status === "string" && status in counts) counts[status as ExecutionStatus]++;
    }
    if (batch.length < BATCH) break;
  }
  return counts;
}

/** Timers are the schedule's `t:` members; run and task leases (`r:`, `k:`) are not timers. */
async function countTimers(client: RedisClient, keys: Keys): Promise<number> {
  // ZSCAN may return a member twice (while Redis rehashes); a set counts it once.
  const timers = new Set<string>();
  let cursor = "0";
  do {
    const [next, entries] = await client.redis.zscan(
      keys.schedule,
      cursor,
      "MATCH",
      "t:*",
      "COUNT",
      BATCH,
    );
    cursor = next;
    // ZSCAN answers member, score, member, score, …
    for (let i = 0; i < entries.length; i += 2) timers.add(entries[i]!);
  } while (cursor !== "0");
  return timers.size;
}
