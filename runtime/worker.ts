import { hostname } from "node:os";
import { Worker, type Job } from "bullmq";
import type { TaskRunner } from "../task-runners/runner.js";
import type { TaskMode } from "../task-runners/resources.js";
import { defaultRunners } from "../task-runners/index.js";
import type { EgressPolicy } from "../task-runners/egress.js";
import { makeKeys, QUEUES } from "./keys.js";
import { InputCache } from "./frame-input.js";
import { ExecutionLocks } from "./locks.js";
import { ExecutionCache } from "./programs.js";
import { giveUpOn } from "./give-up.js";
import { executionOf, longId, randomToken, runOfTask } from "./ids.js";
import { taskJob } from "./job-ids.js";
import { OperationStore } from "./operations.js";
import {
  JobQueues,
  STEP_ATTEMPTS,
  type OperationJob,
  type StepJob,
  type TaskJob,
} from "./queues.js";
import { createRedisRuntime, type RedisRuntime } from "./runtime.js";
import { bullConnection, RedisClient } from "./redis.js";
import { checkStorageVersion } from "./storage-version.js";
import { Scheduler } from "./scheduler.js";
import { resolveSettings, type RuntimeSettings } from "./settings.js";
import { runTaskJob } from "./task-jobs.js";
import { advance } from "./transition.js";
import { defaultLogger, ExecutionFault, faultFields, type WorkerLog } from "./tracing/logger.js";
import { observedRunner } from "./tracing/observed-runner.js";
import { spanSinkFromEnv, type SpanSink } from "./tracing/sink.js";

export interface WorkerOptions extends Partial<RuntimeSettings> {
  /** Transition jobs processed at once (default 32); as many fired timers again (scheduler.ts). */
  concurrency?: number;
  /** Task calls in flight at once (default 64): mostly I/O waits. */
  taskConcurrency?: number;
  /** Tried in order after nothing else; defaults add HTTP. Function handlers: `functionRunner`. */
  taskRunners?: TaskRunner[];
  /** What the default runners may connect to (default: `STEPWISE_EGRESS_ALLOW`). */
  egress?: EgressPolicy;
  /** Overrides how resources are treated (call / activity / park). */
  taskMode?: (resource: string) => TaskMode;
  /** Where job and poll errors go (default: the logger, at error). */
  onError?: (err: unknown) => void;
  /**
   * pino logger of the worker's lines (task attempts that fail, executions given
   * up, errors): JSON with executionId, stateName, attempt and traceId where known.
   * Default: LOG_LEVEL (info) to stderr.
   */
  logger?: WorkerLog;
  /**
   * Where finished spans go (runtime/tracing/). Default: the OTLP exporter when
   * OTEL_EXPORTER_OTLP_ENDPOINT is set, else none (and no tracing cost at all).
   */
  spans?: SpanSink;
  /**
   * Called for each committed transition (a job may chain several) with the time it
   * waited and ran, and for each job that committed nothing (`stale`, `idle`,
   * `missing`); feeds /metrics.
   */
  onTransition?: (info: { result: string; latencyMs: number }) => void;
}

export interface StepwiseWorker {
  /** Stops taking jobs, lets in-flight ones finish (or hands them back after `graceMs`), disconnects. */
  close(graceMs?: number): Promise<void>;
}

/**
 * A worker process's engine room: a BullMQ worker on `steps` (one transition per
 * job), one on `tasks` (task calls), and the timer scheduler. Stateless: any
 * number of them, on any number of machines, share one Redis.
 */
export async function startWorker(options: WorkerOptions = {}): Promise<StepwiseWorker> {
  const settings = resolveSettings(options);
  const keys = makeKeys(settings.prefix);
  const log = options.logger ?? defaultLogger();
  const onError =
    options.onError ??
    ((err: unknown) =>
      log.error(
        { ...faultFields(err), err },
        `worker: ${err instanceof Error ? err.message : String(err)}`,
      ));
  const spans =
    options.spans ??
    (await spanSinkFromEnv(process.env, {
      serviceName: "stepwise-worker",
      onError: (err) => log.warn({ err }, "span export failed"),
    }));
  const client = new RedisClient(settings.redisUrl, { name: "stepwise-worker" });
  try {
    await checkStorageVersion(client.redis, keys);
  } catch (err) {
    await client.close();
    throw err;
  }
  const queueConnection = bullConnection(settings.redisUrl, "stepwise-queues");
  const queues = new JobQueues(queueConnection, keys);
  const executions = new ExecutionCache(client, keys, undefined, settings.payloads);
  const runners = [
    ...(options.taskRunners ?? []),
    ...defaultRunners(options.egress ? { egress: options.egress } : {}),
  ].map((runner) => observedRunner(runner, { log, spans }));
  const deps = {
    client,
    keys,
    executions,
    queues,
    settings,
    runners,
    onError,
    locks: new ExecutionLocks(),
    inputs: new InputCache(),
    ...(options.taskMode ? { taskMode: options.taskMode } : {}),
    ...(spans ? { spans } : {}),
    // Defined below with the scheduler's fire: the same in-process advance.
    advanceRun: (run: string, seq: number) => fire(run, seq),
    owner: `${hostname()}:${process.pid}:${randomToken()}`,
    callTask: (task: string) => callTask(task),
  };
  /**
   * A task a commit of this worker scheduled is called here at once (task-jobs.ts,
   * claimed like any call), up to `taskConcurrency` calls at a time, instead of
   * going through the `tasks` queue: its add, fetch and completion are most of a
   * task turn's Redis work. Past that, or while closing, it is queued as before;
   * a call that throws is queued too, for the queue's retries.
   */
  const taskConcurrency = options.taskConcurrency ?? 64;
  const calls = new Set<Promise<void>>();
  const shutdown = new AbortController();
  let closing: Promise<void> | undefined;
  const callTask = (task: string): boolean => {
    if (closing || calls.size >= taskConcurrency) return false;
    const call: Promise<void> = runTaskJob(deps, task, shutdown.signal)
      .catch(() => queues.ensure(taskJob(task)))
      .catch(onError)
      .finally(() => calls.delete(call));
    calls.add(call);
    return true;
  };
  const common = {
    prefix: keys.bullPrefix,
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    // A job whose worker died is handed back, however often that happens.
    maxStalledCount: 1_000_000,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
    drainDelay: 1,
  };
  /**
   * A job that throws fails alone: BullMQ tries it again with backoff, and after
   * the last attempt its execution is given up on (give-up.ts) and the job ends
   * there, so one poison execution never loops forever nor reaches the process.
   */
  const isolated =
    <T>(runOf: (data: T) => string, work: (job: Job<T>, signal: AbortSignal) => Promise<void>) =>
    async (job: Job<T>, _token?: string, signal?: AbortSignal): Promise<void> => {
      try {
        await work(job, signal ?? new AbortController().signal);
      } catch (fault) {
        const run = runOf(job.data);
        const attempts = job.opts.attempts ?? STEP_ATTEMPTS;
        if (job.attemptsMade + 1 < attempts) throw fault;
        const outcome = await giveUpOn(deps, run, attempts, fault);
        const executionId = longId(executionOf(run));
        onError(
          new ExecutionFault(
            `execution ${executionId}: gave up on run '${run}' after ${attempts} attempts (${outcome}): ${fault instanceof Error ? fault.message : String(fault)}`,
            { executionId, run, attempts, outcome },
            { cause: fault },
          ),
        );
      }
    };
  const steps = new Worker<StepJob>(
    QUEUES.steps,
    isolated<StepJob>(
      (data) => data.r,
      async (job) => {
        // A transition waits from its job's enqueue, or in a chain from the commit before it.
        let since = job.timestamp;
        const result = await advance(deps, job.data.r, job.data.q, (steps) => {
          const now = Date.now();
          // A batch's steps became durable together: each is a transition committed now.
          for (let i = 0; i < steps; i++)
            options.onTransition?.({ result: "committed", latencyMs: now - since });
          since = now;
        });
        if (result !== "committed") {
          options.onTransition?.({ result, latencyMs: Date.now() - job.timestamp });
        }
      },
    ),
    {
      ...common,
      connection: bullConnection(settings.redisUrl, "stepwise-steps"),
      concurrency: options.concurrency ?? 32,
    },
  );
  const tasks = new Worker<TaskJob>(
    QUEUES.tasks,
    isolated<TaskJob>(
      (data) => runOfTask(data.t),
      (job, signal) => runTaskJob(deps, job.data.t, signal),
    ),
    {
      ...common,
      connection: bullConnection(settings.redisUrl, "stepwise-tasks"),
      concurrency: taskConcurrency,
    },
  );
  // Bulk operations act through a runtime, as the API would; made on the first one.
  const operationStore = new OperationStore(client, keys, queues, settings.retentionSeconds);
  let opsRuntime: RedisRuntime | undefined;
  const operations = new Worker<OperationJob>(
    QUEUES.operations,
    async (job) => {
      opsRuntime ??= createRedisRuntime(settings);
      try {
        await operationStore.run(job.data.id, opsRuntime);
      } catch (err) {
        if (job.attemptsMade + 1 >= (job.opts.attempts ?? 1))
          await operationStore.fail(job.data.id, err);
        throw err;
      }
    },
    {
      ...common,
      connection: bullConnection(settings.redisUrl, "stepwise-operations"),
      concurrency: 2,
    },
  );
  operations.on("error", onError);
  steps.on("error", onError);
  tasks.on("error", onError);
  steps.on("failed", (_job, err) => onError(err));
  tasks.on("failed", (_job, err) => onError(err));
  // Runs whose timer fired are advanced right here (see scheduler.ts), latency counted from the claim.
  const fire = async (run: string, seq: number): Promise<void> => {
    let since = Date.now();
    const result = await advance(deps, run, seq, (steps) => {
      const now = Date.now();
      for (let i = 0; i < steps; i++)
        options.onTransition?.({ result: "committed", latencyMs: now - since });
      since = now;
    });
    if (result !== "committed") options.onTransition?.({ result, latencyMs: Date.now() - since });
  };
  const scheduler = new Scheduler(client, keys, queues, settings, onError, {
    fire,
    concurrency: options.concurrency ?? 32,
  });
  scheduler.start();
  await Promise.all([steps.waitUntilReady(), tasks.waitUntilReady(), operations.waitUntilReady()]);

  return {
    close(graceMs = 10_000) {
      closing ??= (async () => {
        await scheduler.stop(graceMs);
        const graceful = Promise.all([
          steps.close(),
          tasks.close(),
          operations.close(),
          Promise.all(calls),
        ]);
        const timer = new Promise<"timeout">((resolve) =>
          setTimeout(() => resolve("timeout"), graceMs).unref(),
        );
        if ((await Promise.race([graceful, timer])) === "timeout") {
          // Jobs still running keep their lock until it expires; BullMQ then hands them to another worker.
          tasks.cancelAllJobs("worker shutdown");
          // Calls made here are queued again for another worker (their claims released).
          shutdown.abort();
          await Promise.all([
            steps.close(true),
            tasks.close(true),
            operations.close(true),
            Promise.all(calls),
          ]);
        }
        await queues.close();
        queueConnection.disconnect();
        // BullMQ never closes a connection it was handed (it could be shared); these
        // two are the workers' own, and left open they would keep the process alive.
        await opsRuntime?.close();
        for (const worker of [steps, tasks, operations]) {
          (worker.opts.connection as { disconnect?: () => void }).disconnect?.();
        }
        await client.close();
        // What the last commits ended is still batched: sent before the process goes.
        if (!options.spans) await spans?.close();
      })();
      return closing;
    },
  };
}
