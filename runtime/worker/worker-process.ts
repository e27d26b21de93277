import { hostname } from "node:os";
import type { Redis } from "ioredis";
import type { TaskRunner } from "../../task-runners/runner.js";
import type { ExecutionResult } from "../contract/index.js";
import { ExecutionLocks } from "../commit/commit-locks.js";
import type { ExecutionCache } from "../commit/execution-cache.js";
import { HeldRuns } from "../commit/held-runs.js";
import { InputCache } from "../payloads/frame-input.js";
import type { RuntimeSettings } from "../settings.js";
import { randomToken } from "../store/ids.js";
import { bullConnection, type RedisClient } from "../store/redis.js";
import type { SpanSink } from "../tracing/sink.js";
import type { ScheduleWatch } from "./scheduler.js";
import type { TaskCalls } from "./task-calls.js";
import type { WorkerOptions } from "./worker.js";

/**
 * What the engine rooms of one worker process (engine-room.ts) share: its
 * connections, the transition deps that are not a shard's, its in-process task
 * calls, its error reporting, and the options every BullMQ worker of it gets.
 */
export interface WorkerProcess {
  options: WorkerOptions;
  settings: RuntimeSettings;
  shared: SharedDeps;
  connections: WorkerConnections;
  calls: TaskCalls;
  watch: ScheduleWatch;
  onError: (err: unknown) => void;
  /** The BullMQ workers' errors: a lost lock is counted and summarized, not an error (lock-loss.ts). */
  onJobError: (err: unknown) => void;
}

/** The process's BullMQ connections, besides the client's and each blocking worker's own. */
export interface WorkerConnections {
  /** The queues' (adds of follow-ups, task jobs, operation records). */
  queues: Redis;
  /** BullMQ workers share these for their non-blocking commands (each blocks on its own). */
  steps: Redis;
  tasks: Redis;
}

export function openConnections(settings: RuntimeSettings): WorkerConnections {
  return {
    queues: bullConnection(settings, "stepwise-queues"),
    steps: bullConnection(settings, "stepwise-steps"),
    tasks: bullConnection(settings, "stepwise-tasks"),
  };
}

/** The transition and task-job deps (commit/transition.ts, task-jobs.ts) common to every shard. */
export function sharedDeps(
  client: RedisClient,
  executions: ExecutionCache,
  settings: RuntimeSettings,
  runners: TaskRunner[],
  onError: (err: unknown) => void,
  options: Pick<WorkerOptions, "taskMode">,
  spans: SpanSink | undefined,
) {
  const ends: EndListener = { listener: undefined };
  return {
    client,
    executions,
    settings,
    runners,
    onError,
    /** Who hears of the ends this process commits (`serve`'s waiters: worker.ts `tellEnds`). */
    ends,
    onEnded: (executionId: string, result: ExecutionResult) => ends.listener?.(executionId, result),
    locks: new ExecutionLocks(),
    inputs: new InputCache(),
    held: new HeldRuns(),
    ...(options.taskMode ? { taskMode: options.taskMode } : {}),
    ...(spans ? { spans } : {}),
    owner: `${hostname()}:${process.pid}:${randomToken()}`,
  };
}

export type SharedDeps = ReturnType<typeof sharedDeps>;

/** Where the ends this process commits are told, once something listens (worker.ts `tellEnds`). */
export interface EndListener {
  listener: ((executionId: string, result: ExecutionResult) => void) | undefined;
}

/** What every BullMQ worker of the process is given. */
export function jobOptions(settings: RuntimeSettings) {
  return {
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    // A job whose worker died is handed back, however often that happens.
    maxStalledCount: 1_000_000,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
    drainDelay: 1,
  };
}
