import { Worker } from "bullmq";
import type { ExecutionCache } from "../commit/execution-cache.js";
import type { Runtime } from "../contract/index.js";
import { MachineStore } from "../definitions/machines.js";
import { OperationStore } from "../executions/operations/bulk.js";
import { executionRoom, type OperationContext } from "../executions/operations/context.js";
import { bulkTarget, type BulkTarget } from "../executions/operations/control.js";
import type { ShardLayout } from "../shards/shards.js";
import { QUEUES, type Keys } from "../store/keys.js";
import { bullConnection } from "../store/redis.js";
import type { SpanSink } from "../tracing/sink.js";
import { JobQueues, operationsQueue, type OperationJob } from "./queues.js";
import { jobOptions, type WorkerProcess } from "./worker-process.js";

/**
 * The worker of the deployment's bulk operations (executions/operations/bulk.ts),
 * one per process whatever shards it serves: an operation's filter spans every
 * shard. Each execution is acted on through the execution operations themselves
 * (executions/operations/control.ts), over a context of this process's
 * connections, opened on the first operation.
 */
export interface BulkWorker {
  worker: Worker<OperationJob>;
  /** Closes its queues and connection (the worker itself is closed with the others). */
  close(): Promise<void>;
}

export function openBulkWorker(
  proc: WorkerProcess,
  control: Keys,
  layout: ShardLayout,
  spans: SpanSink | undefined,
): BulkWorker {
  const { client, settings } = proc.shared;
  const queue = operationsQueue(proc.connections.queues, control);
  const store = new OperationStore(client, control, queue, settings.retentionSeconds);
  let opened: { target: BulkTarget; queues: JobQueues[] } | undefined;
  const connection = bullConnection(settings, "stepwise-operations");
  const worker = new Worker<OperationJob>(
    QUEUES.operations,
    async (job) => {
      opened ??= openTarget(proc, control, layout, spans);
      try {
        // OperationStore.run asks for a whole Runtime and calls only the five calls of
        // a BulkTarget (executions/operations/bulk.ts `act`, `run`): narrowing its parameter to
        // BulkTarget there would make this assertion unnecessary.
        await store.run(job.data.id, opened.target as Runtime);
      } catch (err) {
        if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await store.fail(job.data.id, err);
        throw err;
      }
    },
    { ...jobOptions(settings), prefix: control.bullPrefix, connection, concurrency: 2 },
  );
  worker.on("error", proc.onJobError);
  return {
    worker,
    async close() {
      await Promise.all(opened?.queues.map((queues) => queues.close()) ?? []);
      await queue.close();
      // BullMQ never closes a connection it was handed: this one is the worker's own.
      connection.disconnect();
    },
  };
}

/** The bulk actions over every shard's execution stores, on this process's connections. */
function openTarget(
  proc: WorkerProcess,
  control: Keys,
  layout: ShardLayout,
  spans: SpanSink | undefined,
): { target: BulkTarget; queues: JobQueues[] } {
  const { client, settings } = proc.shared;
  const cache: ExecutionCache = proc.shared.executions;
  const machines = new MachineStore(client, control);
  const queues = layout.shards.map((keys) => new JobQueues(proc.connections.queues, keys));
  const rooms = layout.shards.map((keys, shard) =>
    executionRoom({ client, machines, cache, settings }, keys, queues[shard]!),
  );
  const ctx: OperationContext = {
    client,
    settings,
    shards: Promise.resolve({ layout, rooms, cache }),
    // A bulk stop commits in this process: its spans go where the worker's go.
    spans: () => Promise.resolve(spans),
  };
  return { target: bulkTarget(ctx), queues };
}
