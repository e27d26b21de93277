import type { Worker } from "bullmq";
import type { RedisClient } from "../store/redis.js";
import type { SpanSink } from "../tracing/sink.js";
import type { BulkWorker } from "./bulk-worker.js";
import type { EngineRoom } from "./engine-room.js";
import type { LockLossReport } from "./lock-loss.js";
import type { WorkerProcess } from "./worker-process.js";

/** What a worker process closes, in the order `closeWorker` closes it. */
export interface Closing {
  proc: WorkerProcess;
  rooms: EngineRoom[];
  bulk: BulkWorker;
  client: RedisClient;
  lockLoss: LockLossReport;
  /** The span sink the worker made itself (not one it was given): flushed last. */
  ownSpans: SpanSink | undefined;
}

/**
 * Stops taking jobs and lets in-flight ones finish; after `graceMs`, hands the
 * rest back (their locks expire, BullMQ gives them to another worker) and queues
 * its in-process task calls again. Then disconnects everything it opened.
 */
export async function closeWorker(closing: Closing, graceMs: number): Promise<void> {
  const { proc, rooms, bulk } = closing;
  proc.calls.close();
  await Promise.all(rooms.map((room) => room.scheduler.stop(graceMs)));
  proc.watch.close();
  const workers: Worker[] = [...rooms.flatMap((room) => [room.steps, room.tasks]), bulk.worker];
  const graceful = Promise.all([...workers.map((w) => w.close()), proc.calls.settled()]);
  const timer = new Promise<"timeout">((resolve) =>
    setTimeout(() => resolve("timeout"), graceMs).unref(),
  );
  if ((await Promise.race([graceful, timer])) === "timeout") {
    // Jobs still running keep their lock until it expires; BullMQ then hands them to another worker.
    for (const room of rooms) room.tasks.cancelAllJobs("worker shutdown");
    // Calls made here are queued again for another worker (their claims released).
    proc.calls.shutdown.abort();
    await Promise.all([...workers.map((w) => w.close(true)), proc.calls.settled()]);
  }
  await Promise.all(rooms.map((room) => room.queues.close()));
  await bulk.close();
  // BullMQ never closes a connection it was handed (it could be shared); these
  // are the workers' own, and left open they would keep the process alive.
  proc.connections.queues.disconnect();
  proc.connections.steps.disconnect();
  proc.connections.tasks.disconnect();
  await closing.client.close();
  closing.lockLoss.flush();
  // What the last commits ended is still batched: sent before the process goes.
  await closing.ownSpans?.close();
}
