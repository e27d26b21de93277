import { hostname } from "node:os";
import { summarizeOutages } from "../store/connection-errors.js";
import { Worker, type Job } from "bullmq";
import type { TaskRunner } from "../../task-runners/runner.js";
import type { TaskMode } from "../../task-runners/resources.js";
import { defaultRunners } from "../../task-runners/index.js";
import type { EgressPolicy } from "../../task-runners/egress.js";
import type { ModelEndpoints } from "../../task-runners/model/endpoints.js";
import { makeKeys, QUEUES, type Keys } from "../store/keys.js";
import { HeldRuns } from "../commit/held-runs.js";
import { InputCache } from "../payloads/frame-input.js";
import { ExecutionLocks } from "../commit/commit-locks.js";
import { ExecutionCache } from "../commit/execution-cache.js";
import { giveUpOn } from "../commit/give-up.js";
import { executionOf, longId, randomToken, runOfTask } from "../store/ids.js";
import { taskJob } from "../store/job-ids.js";
import { OperationStore } from "../executions/bulk-operations.js";
import {
  JobQueues,
  operationsQueue,
  STEP_ATTEMPTS,
  type OperationJob,
  type StepJob,
  type TaskJob,
} from "./queues.js";
import { createRedisRuntime, type RedisRuntime } from "../runtime.js";
import { bullConnection, RedisClient } from "../store/redis.js";
import { checkStorageVersion } from "../store/storage-version.js";
import { Scheduler, ScheduleWatch } from "./scheduler.js";
import { resolveShardCount, servedShards, ShardLayout } from "../shards/shards.js";
import { resolveSettings, WORKER_DEFAULTS, type RuntimeSettings } from "../settings.js";
import { claimTaskCall, releaseTaskCall, runTaskJob } from "./task-jobs.js";
import type { TaskCallClaimReply } from "../store/scripts/task-call-claim.js";
import type { LoadSnapshot } from "../store/scripts/load-transition.js";
import { advance } from "../commit/transition.js";
import { isLockLoss, lockLossReport } from "./lock-loss.js";
import { defaultLogger, ExecutionFault, faultFields, type WorkerLog } from "../tracing/logger.js";
import { observedRunner } from "../tracing/observed-runner.js";
import { otlpSink, type SpanSink } from "../tracing/sink.js";

export interface WorkerOptions extends Partial<RuntimeSettings> {
  /**
   * Transition jobs processed at once on each shard this process serves (default
   * 32): each shard has its own BullMQ queues and workers (shards.ts), so a process
   * serving all 16 shards runs up to 16 times as many.
   */
  concurrency?: number;
  /**
   * Runs advanced at once on each shard in this process besides its jobs: those
   * whose timers it claimed, and those its commits woke (scheduler.ts). Default:
   * `concurrency`, but at least 64. These advances commit batched, one EVALSHA per script per tick
   * (redis.ts), so more at once costs Redis less per transition: 50,000 timers due
   * at once took 7.3–7.4 s to fire at 16 (Redis 124–129 µs each) and 5.0–5.7 s at 64
   * (77–86 µs), two workers on 2 cores (`bench/costs.ts timers`).
   */
  fireConcurrency?: number;
  /**
   * Task calls in flight at once that this process's commits hand it, over every
   * shard (default 64): mostly I/O waits. Task jobs from the queue (retries, a
   * call past this limit) run besides, as many on each shard's tasks worker.
   */
  taskConcurrency?: number;
  /** Tried in order after nothing else; defaults add HTTP. Function handlers: `functionRunner`. */
  taskRunners?: TaskRunner[];
  /** What the default runners may connect to (default: nothing private; config/: `STEPWISE_EGRESS_ALLOW`). */
  egress?: EgressPolicy;
  /** The longest HTTP task response read (default 256 KiB, or the payload policy's read limit). */
  httpMaxResponseBytes?: number;
  /** The model runner's endpoints (default: none). */
  modelEndpoints?: ModelEndpoints;
  /** Where the model runner finds the keys its endpoints name by variable (default: none). */
  secrets?: Readonly<Record<string, string | undefined>>;
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
  /**
   * Called for each job that outlived its lock (lock-loss.ts): those are logged
   * as a warning once per 10 s, not passed to `onError`; feeds /metrics.
   */
  onLockLost?: () => void;
}

export interface StepwiseWorker {
  /** Stops taking jobs, lets in-flight ones finish (or hands them back after `graceMs`), disconnects. */
  close(graceMs?: number): Promise<void>;
}

/**
 * A worker process: for each shard it serves (all, or `STEPWISE_WORKER_SHARDS`),
 * an engine room of a BullMQ worker on that shard's `steps` (one transition per
 * job), one on its `tasks` (task calls) and its timer scheduler; and one worker on
 * the deployment's bulk operations. Stateless: any number of them, on any number
 * of machines, share one Redis or one Redis Cluster.
 */
export async function startWorker(options: WorkerOptions = {}): Promise<StepwiseWorker> {
  const settings = resolveSettings(options);
  const control = makeKeys(settings.prefix);
  const log = options.logger ?? defaultLogger();
  const onError = summarizeOutages(
    options.onError ??
      ((err: unknown) =>
        log.error(
          { ...faultFields(err), err },
          `worker: ${err instanceof Error ? err.message : String(err)}`,
        )),
  );
  const spans =
    options.spans ??
    (settings.otlp
      ? await otlpSink({
          serviceName: "stepwise-worker",
          onError: (err) => log.warn({ err }, "span export failed"),
        })
      : undefined);
  const client = new RedisClient(settings, { name: "stepwise-worker" });
  let layout: ShardLayout;
  let served: number[];
  try {
    // The shard count first: a fresh deployment's is stored before anything else is.
    layout = new ShardLayout(
      settings.prefix,
      await resolveShardCount(client.redis, control, settings.shards),
    );
    served = servedShards(layout.count, settings.workerShards);
    await checkStorageVersion(client.redis, control);
  } catch (err) {
    await client.close();
    throw err;
  }
  const queueConnection = bullConnection(settings, "stepwise-queues");
  // BullMQ workers share these for their non-blocking commands (each blocks on its own).
  const stepConnection = bullConnection(settings, "stepwise-steps");
  const taskConnection = bullConnection(settings, "stepwise-tasks");
  const executions = new ExecutionCache(client, layout, undefined, settings.payloads);
  const runners = [
    ...(options.taskRunners ?? []),
    ...defaultRunners({
      ...(options.egress ? { egress: options.egress } : {}),
      ...(options.httpMaxResponseBytes !== undefined
        ? { maxResponseBytes: options.httpMaxResponseBytes }
        : {}),
      ...(options.modelEndpoints ? { modelEndpoints: options.modelEndpoints } : {}),
      ...(options.secrets ? { secrets: options.secrets } : {}),
      ...(settings.payloads ? { payloads: settings.payloads } : {}),
    }),
  ].map((runner) => observedRunner(runner, { log, spans }));
  const shared = {
    client,
    executions,
    settings,
    runners,
    onError,
    locks: new ExecutionLocks(),
    inputs: new InputCache(),
    held: new HeldRuns(),
    ...(options.taskMode ? { taskMode: options.taskMode } : {}),
    ...(spans ? { spans } : {}),
    owner: `${hostname()}:${process.pid}:${randomToken()}`,
  };
  /**
   * A task a commit of this worker scheduled is called here at once (task-jobs.ts,
   * claimed like any call), up to `taskConcurrency` calls at a time over every
   * shard, instead of going through the `tasks` queue: its add, fetch and completion
   * are most of a task turn's Redis work. Past that, or while closing, it is queued
   * as before; a call that throws is queued too, for the queue's retries.
   */
  const taskConcurrency = options.taskConcurrency ?? WORKER_DEFAULTS.taskConcurrency;
  const calls = new Set<Promise<void>>();
  const shutdown = new AbortController();
  let closing: Promise<void> | undefined;
  const common = {
    lockDuration: settings.lockDurationMs,
    stalledInterval: settings.stalledIntervalMs,
    // A job whose worker died is handed back, however often that happens.
    maxStalledCount: 1_000_000,
    removeOnComplete: { count: 0 },
    removeOnFail: { count: 0 },
    drainDelay: 1,
  };

  const lockLoss = lockLossReport(log, settings.lockDurationMs, options.onLockLost);
  /** The BullMQ workers' errors: a lost lock is counted and summarized, not an error (lock-loss.ts). */
  const onJobError = (err: unknown): void =>
    isLockLoss(err) ? lockLoss.add(err as Error) : onError(err);

  const watch = new ScheduleWatch(client, settings.timerPollMs);
  /** One shard's queues, workers and scheduler, over the process's connections. */
  const openRoom = (keys: Keys) => {
    const queues = new JobQueues(queueConnection, keys);
    let scheduler: Scheduler | undefined;
    const deps = {
      ...shared,
      keys,
      queues,
      // Defined below with the scheduler's fire: the same in-process advance.
      advanceRun: (run: string, seq: number, head?: string) =>
        fire(run, seq, head !== undefined ? { head } : undefined),
      callTask: (task: string, claim?: Promise<TaskCallClaimReply>) => callTask(task, claim),
      claimAhead: (task: string) => claimAhead(task),
    };
    /** How this process advances runs: the runs their commits wake are advanced here too. */
    const here = {
      ...deps,
      // Into the scheduler's fires (below), as a claimed timer's run is.
      advanceHere: (run: string, seq: number) => scheduler?.take(run, seq) ?? false,
      ensureWhenStale: false,
    };
    /** Claims sent ahead (transition.ts) hold a place among the calls until theirs starts. */
    let ahead = 0;
    const claimAhead = (task: string): Promise<TaskCallClaimReply> | undefined => {
      if (closing || calls.size + ahead >= taskConcurrency) return undefined;
      ahead += 1;
      return claimTaskCall(deps, task);
    };
    const callTask = (task: string, claim?: Promise<TaskCallClaimReply>): boolean => {
      if (claim) ahead -= 1;
      if (closing || (!claim && calls.size + ahead >= taskConcurrency)) {
        // Queued instead: the job must not find the call claimed by this process.
        if (claim) releaseTaskCall(deps, task, claim).catch(onError);
        return false;
      }
      const call: Promise<void> = runTaskJob(deps, task, shutdown.signal, claim)
        .catch(() => queues.ensure(taskJob(task)))
        .catch(onError)
        .finally(() => calls.delete(call));
      calls.add(call);
      return true;
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
          const result = await advance(here, job.data.r, job.data.q, (steps) => {
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
        prefix: keys.bullPrefix,
        connection: stepConnection,
        concurrency: options.concurrency ?? WORKER_DEFAULTS.concurrency,
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
        prefix: keys.bullPrefix,
        connection: taskConnection,
        concurrency: taskConcurrency,
      },
    );
    steps.on("error", onJobError);
    tasks.on("error", onJobError);
    steps.on("failed", (_job, err) => onJobError(err));
    tasks.on("failed", (_job, err) => onJobError(err));
    // Runs whose timer fired are advanced right here (see scheduler.ts), latency counted from the claim.
    const fire = async (
      run: string,
      seq: number,
      from?: { head: string } | { snapshot: LoadSnapshot },
    ): Promise<void> => {
      let since = Date.now();
      const onCommit = (steps: number) => {
        const now = Date.now();
        for (let i = 0; i < steps; i++)
          options.onTransition?.({ result: "committed", latencyMs: now - since });
        since = now;
      };
      const result = await advance(here, run, seq, onCommit, from);
      if (result !== "committed") options.onTransition?.({ result, latencyMs: Date.now() - since });
    };
    scheduler = new Scheduler(client, keys, queues, settings, onError, {
      watch,
      fire: (run, seq, snapshot) => fire(run, seq, snapshot && { snapshot }),
      concurrency:
        options.fireConcurrency ??
        Math.max(
          options.concurrency ?? WORKER_DEFAULTS.concurrency,
          WORKER_DEFAULTS.minFireConcurrency,
        ),
    });
    scheduler.start();
    return { queues, steps, tasks, scheduler };
  };
  const rooms = served.map((shard) => openRoom(layout.shards[shard]!));

  // Bulk operations act through a runtime, as the API would; made on the first one.
  const operationQueue = operationsQueue(queueConnection, control);
  const operationStore = new OperationStore(
    client,
    control,
    operationQueue,
    settings.retentionSeconds,
  );
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
      prefix: control.bullPrefix,
      connection: bullConnection(settings, "stepwise-operations"),
      concurrency: 2,
    },
  );
  operations.on("error", onJobError);
  await Promise.all([
    ...rooms.flatMap((room) => [room.steps.waitUntilReady(), room.tasks.waitUntilReady()]),
    operations.waitUntilReady(),
  ]);
  const workers = [...rooms.flatMap((room) => [room.steps, room.tasks]), operations];

  return {
    close(graceMs = 10_000) {
      closing ??= (async () => {
        await Promise.all(rooms.map((room) => room.scheduler.stop(graceMs)));
        watch.close();
        const graceful = Promise.all([...workers.map((w) => w.close()), Promise.all(calls)]);
        const timer = new Promise<"timeout">((resolve) =>
          setTimeout(() => resolve("timeout"), graceMs).unref(),
        );
        if ((await Promise.race([graceful, timer])) === "timeout") {
          // Jobs still running keep their lock until it expires; BullMQ then hands them to another worker.
          for (const room of rooms) room.tasks.cancelAllJobs("worker shutdown");
          // Calls made here are queued again for another worker (their claims released).
          shutdown.abort();
          await Promise.all([...workers.map((w) => w.close(true)), Promise.all(calls)]);
        }
        await Promise.all(rooms.map((room) => room.queues.close()));
        await operationQueue.close();
        queueConnection.disconnect();
        // BullMQ never closes a connection it was handed (it could be shared); these
        // are the workers' own, and left open they would keep the process alive.
        await opsRuntime?.close();
        stepConnection.disconnect();
        taskConnection.disconnect();
        (operations.opts.connection as { disconnect?: () => void }).disconnect?.();
        await client.close();
        lockLoss.flush();
        // What the last commits ended is still batched: sent before the process goes.
        if (!options.spans) await spans?.close();
      })();
      return closing;
    },
  };
}
