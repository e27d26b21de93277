import { EXECUTION_STATUSES, type ExecutionStatus, type RuntimeMetrics } from "./contract.js";
import type { Keys } from "./keys.js";
import type { JobQueues } from "./queues.js";
import type { RedisClient } from "./redis.js";

/** BullMQ job states worth watching; completed and failed jobs are removed at once (queues.ts). */
const JOB_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children"] as const;

const STATUSES = EXECUTION_STATUSES;

/** Timers read per round trip when counting them. */
const BATCH = 1000;

/**
 * Reads the runtime's figures for /metrics from Redis, once per scrape.
 *
 * Executions by status come from the counts the start and commit scripts keep
 * (`keys.stats`), one read however many executions there are: RUNNING is how
 * many run now, the others how many ended with that status (counted when they
 * end; retention does not subtract). Timers are counted by a scan of the
 * schedule, one round trip per thousand.
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
  const stored = await client.redis.hgetall(keys.stats);
  return Object.fromEntries(STATUSES.map((s) => [s, Number(stored[s] ?? 0)])) as Record<
    ExecutionStatus,
    number
  >;
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
