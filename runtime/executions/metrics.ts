import {
  EXECUTION_STATUSES,
  type ExecutionStatus,
  type RuntimeMetrics,
} from "../contract/index.js";
import { STATS_FIELDS } from "../store/fields.js";
import type { Keys } from "../store/keys.js";
import type { JobQueues } from "../worker/queues.js";
import type { RedisClient } from "../store/redis.js";

/** BullMQ job states worth watching; completed and failed jobs are removed at once (queues.ts). */
const JOB_STATES = ["waiting", "active", "delayed", "prioritized", "waiting-children"] as const;

/**
 * Reads the runtime's figures for /metrics from Redis, once per scrape.
 *
 * Executions by status and armed timers come from the counts the scripts keep
 * (`keys.stats`), one read however many there are: RUNNING is how many run now,
 * the others how many ended with that status (counted when they end; retention
 * does not subtract).
 */
export async function readRuntimeMetrics(
  client: RedisClient,
  keys: Keys,
  queues: JobQueues,
): Promise<Omit<RuntimeMetrics, "executionsStartedTotal">> {
  const [stats, steps, tasks, pendingTaskTokens] = await Promise.all([
    client.redis.hgetall(keys.stats),
    queues.steps.getJobCounts(...JOB_STATES),
    queues.tasks.getJobCounts(...JOB_STATES),
    client.redis.hlen(keys.tokens),
  ]);
  const executionsByStatus = Object.fromEntries(
    EXECUTION_STATUSES.map((s) => [s, Number(stats[s] ?? 0)]),
  ) as Record<ExecutionStatus, number>;
  const pendingTimers = Number(stats[STATS_FIELDS.timers] ?? 0);
  return {
    executionsByStatus,
    queueDepth: { steps, tasks },
    pendingTimers,
    pendingTaskTokens,
    executionsGivenUpTotal: Number(stats[STATS_FIELDS.givenUp] ?? 0),
  };
}
