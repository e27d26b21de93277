import type { ExecutionRecord } from "../contract/index.js";
import { longId } from "../store/ids.js";
import { openRedis, type RedisTarget } from "../store/redis.js";
import type { ShardLayout } from "../shards/shards.js";

/**
 * One log line for every execution that ends other than SUCCEEDED, naming its
 * error, from the processes that run workers. The commit script PUBLISHes the
 * short id of each execution that ended other than SUCCEEDED on `<base>failed`
 * (a succeeded one costs nothing here); every such process hears it, and the
 * first to claim `<base>failure-logged:<id>` (SET NX, one hour) reads the record
 * and logs it, so N workers write one line, not N. Pub/sub is fire-and-forget: an
 * end published while no process listens is not logged (its history still has it).
 */
export interface FailureLog {
  close(): Promise<void>;
}

export async function logFailedExecutions(options: {
  redis: RedisTarget;
  /** Every shard's `ended` channel is heard. */
  layout: ShardLayout;
  describe: (executionId: string) => Promise<ExecutionRecord>;
  log: (record: ExecutionRecord) => void;
}): Promise<FailureLog> {
  const { layout } = options;
  const subscriber = openRedis(options.redis, "stepwise-failure-log");
  const claims = openRedis(options.redis, "stepwise-failure-log-claims", {
    maxRetriesPerRequest: 1,
  });
  // Connection errors are retried; a failure ended meanwhile goes unlogged, not lost.
  subscriber.on("error", () => {});
  claims.on("error", () => {});
  subscriber.on("message", (_channel: string, short: string) => {
    void (async () => {
      const claimed = await claims.set(
        layout.keysOf(short).failureLogged(short),
        "1",
        "EX",
        3600,
        "NX",
      );
      if (claimed !== "OK") return;
      const record = await options.describe(longId(short));
      // RUNNING again: redriven between its end and this read.
      if (record.status !== "RUNNING" && record.status !== "SUCCEEDED") options.log(record);
    })().catch(() => {
      // A record that cannot be read now is not worth a stack trace in the log.
    });
  });
  await subscriber.subscribe(...layout.shards.map((keys) => keys.failedChannel));
  return {
    async close() {
      subscriber.disconnect();
      claims.disconnect();
    },
  };
}

/** The fields of a failure log line. */
export function failureFields(record: ExecutionRecord): Record<string, string> {
  return {
    executionId: record.executionId,
    stateMachine: record.stateMachine,
    status: record.status,
    error: record.error ?? "",
    cause: (record.cause ?? "").slice(0, 500),
    ...(record.traceId !== undefined ? { traceId: record.traceId } : {}),
  };
}
