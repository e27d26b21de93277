import { defaultRunners, type DefaultRunnerOptions } from "../../task-runners/index.js";
import type { AwsRunnerOptions, PublishLocal } from "../../task-runners/aws/index.js";
import type { EgressPolicy } from "../../task-runners/egress.js";
import type { ModelEndpoints } from "../../task-runners/model/endpoints.js";
import type { TaskMode } from "../../task-runners/resources.js";
import type { TaskRunner } from "../../task-runners/runner.js";
import { childExecutions } from "../children/index.js";
import { ExecutionCache } from "../commit/execution-cache.js";
import type { ExecutionResult } from "../contract/index.js";
import type { LoadSnapshot } from "../store/scripts/load-transition.js";
import { RedisRuntime } from "../runtime.js";
import { mapRunRunners, type ItemStoreSettings } from "../map-runs/index.js";
import { expressChunkRunner } from "../map-runs/express-chunks.js";
import { resolveSettings, WORKER_DEFAULTS, type RuntimeSettings } from "../settings.js";
import { resolveShardCount, servedShards, ShardLayout } from "../shards/shards.js";
import { summarizeOutages } from "../store/connection-errors.js";
import { makeKeys, type Keys } from "../store/keys.js";
import { RedisClient } from "../store/redis.js";
import { checkStorageVersion } from "../store/storage-version.js";
import { defaultLogger, faultFields, type WorkerLog } from "../tracing/logger.js";
import { observedRunner } from "../tracing/observed-runner.js";
import { otlpSink, type SpanSink } from "../tracing/sink.js";
import { openBulkWorker } from "./bulk-worker.js";
import { openEngineRoom } from "./engine-room.js";
import { isLockLoss, lockLossReport } from "./lock-loss.js";
import { ScheduleWatch } from "./scheduler.js";
import { closeWorker } from "./shutdown.js";
import { TaskCalls } from "./task-calls.js";
import { eventWaitRunner } from "../triggers/events/event-wait-runner.js";
import { startTriggerLoop } from "../triggers/trigger-loop.js";
import { openConnections, sharedDeps, type WorkerProcess } from "./worker-process.js";

export interface WorkerOptions extends Partial<RuntimeSettings> {
  /**
   * Transition jobs processed at once on each shard this process serves (default
   * 16, runtime/settings.ts `WORKER_DEFAULTS`): each shard has its own BullMQ queues
   * and workers (shards/shards.ts), so a process serving all 16 shards runs up to
   * 16 times as many.
   */
  concurrency?: number;
  /**
   * Runs advanced at once on each shard in this process besides its jobs: those
   * whose timers it claimed, and those its commits woke (scheduler.ts). Default:
   * `concurrency`, but at least 64. These advances commit batched, one EVALSHA per script per tick
   * (store/redis.ts), so more at once costs Redis less per transition: 50,000 timers due
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
  /** The AWS runner's region and endpoint overrides (config/: STEPWISE_AWS_*). */
  aws?: DefaultRunnerOptions["aws"];
  /** `events:putEvents` to the default bus publishes into Stepwise's own bus (config/: STEPWISE_EVENTS_LOCAL). */
  eventsLocal?: boolean;
  /** Where a Distributed Map reads items and writes results (config/: `STEPWISE_S3_ENDPOINT`; default: AWS S3, us-east-1). */
  itemStore?: ItemStoreSettings;
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
  /**
   * Advances `<run>@<seq>` of shard `shard` in this process when it serves the shard
   * and has room (scheduler.ts `take`), from `snapshot` when the caller has the run
   * as its start wrote it; false: the caller queues it. The run must hold a lease in
   * the schedule, as a new execution's does (its start script writes it).
   */
  advanceHere(shard: number, run: string, seq: number, snapshot?: LoadSnapshot): boolean;
  /**
   * Tells `listener` of each execution a commit of this process ends, with the
   * result its record now holds (`serve`: its waiters answer from it).
   */
  tellEnds(listener: (executionId: string, result: ExecutionResult) => void): void;
}

/**
 * A worker process: for each shard it serves (all, or `STEPWISE_WORKER_SHARDS`),
 * an engine room (engine-room.ts) of a BullMQ worker on that shard's `steps` (one
 * transition per job), one on its `tasks` (task calls) and its timer scheduler;
 * and one worker on the deployment's bulk operations (bulk-worker.ts). Stateless:
 * any number of them, on any number of machines, share one Redis or one Redis
 * Cluster. Closing: shutdown.ts.
 */
export async function startWorker(options: WorkerOptions = {}): Promise<StepwiseWorker> {
  const settings = resolveSettings(options);
  const control = makeKeys(settings.prefix);
  const log = options.logger ?? defaultLogger();
  const onError = summarizeOutages(options.onError ?? ((err: unknown) => logError(log, err)));
  const ownSpans =
    options.spans === undefined && settings.otlp
      ? await otlpSink({
          serviceName: "stepwise-worker",
          onError: (err) => log.warn({ err }, "span export failed"),
        })
      : undefined;
  const spans = options.spans ?? ownSpans;
  const client = new RedisClient(settings, { name: "stepwise-worker" });
  const { layout, served } = await openDeployment(client, control, settings);
  const executions = new ExecutionCache(client, layout, undefined, settings.payloads);
  const localEvents = options.eventsLocal ? openLocalEvents(settings) : undefined;
  // `states:startExecution`: child executions and the watch of their ends (runtime/children/).
  const children = childExecutions(client.redis, settings, onError);
  const runners = [
    // `stepwise:waitForEvent` registers its token with the event bus (runtime/triggers/).
    observedRunner(eventWaitRunner(client.redis, settings.prefix), { log, spans }),
    // After the given runners (mocks win), before the defaults (the AWS runner's startExecution).
    ...workerRunners(
      { ...options, taskRunners: [...(options.taskRunners ?? []), children.runner] },
      settings,
      log,
      spans,
      localEvents?.publish,
    ),
  ];
  const lockLoss = lockLossReport(log, settings.lockDurationMs, options.onLockLost);
  const proc: WorkerProcess = {
    options,
    settings,
    shared: sharedDeps(client, executions, settings, runners, onError, options, spans),
    connections: openConnections(settings),
    calls: new TaskCalls(options.taskConcurrency ?? WORKER_DEFAULTS.taskConcurrency, onError),
    watch: new ScheduleWatch(client, settings.timerPollMs),
    onError,
    onJobError: (err) => (isLockLoss(err) ? lockLoss.add(err as Error) : onError(err)),
  };
  const rooms = served.map((shard) => openEngineRoom(proc, layout.shards[shard]!));
  const roomOf = new Map(served.map((shard, i) => [shard, rooms[i]!]));
  const bulk = openBulkWorker(proc, control, layout, spans);
  await Promise.all([
    ...rooms.flatMap((room) => [room.steps.waitUntilReady(), room.tasks.waitUntilReady()]),
    bulk.worker.waitUntilReady(),
  ]);
  // Schedules that are due and events whose delivery is overdue (runtime/triggers/).
  const triggers = startTriggerLoop(client.redis, settings, onError);
  let closing: Promise<void> | undefined;
  return {
    advanceHere: (shard, run, seq, snapshot) =>
      closing === undefined && (roomOf.get(shard)?.scheduler.take(run, seq, snapshot) ?? false),
    tellEnds: (listener) => void (proc.shared.ends.listener = listener),
    close(graceMs = 10_000) {
      closing ??= triggers
        .close()
        .catch(onError)
        .then(() => children.close())
        .then(() => closeWorker({ proc, rooms, bulk, client, lockLoss, ownSpans }, graceMs))
        .finally(() => localEvents?.close().catch(onError));
      return closing;
    },
  };
}

/** Where job and poll errors go without `onError`: the logger, at error. */
function logError(log: WorkerLog, err: unknown): void {
  log.error(
    { ...faultFields(err), err },
    `worker: ${err instanceof Error ? err.message : String(err)}`,
  );
}

/**
 * The deployment's shard layout and the shards this process serves. The shard
 * count first: a fresh deployment's is stored before anything else is.
 */
async function openDeployment(
  client: RedisClient,
  control: Keys,
  settings: RuntimeSettings,
): Promise<{ layout: ShardLayout; served: number[] }> {
  try {
    const count = await resolveShardCount(client.redis, control, settings.shards);
    const layout = new ShardLayout(settings.prefix, count);
    const served = servedShards(layout.count, settings.workerShards);
    await checkStorageVersion(client.redis, control);
    return { layout, served };
  } catch (err) {
    await client.close();
    throw err;
  }
}

/**
 * STEPWISE_EVENTS_LOCAL: the AWS runner's `events:putEvents` publishes into the bus
 * as `POST /v1/events` does (runtime/triggers/triggers.ts `publish`: stored, then
 * delivered to rules and waiters), through a runtime of its own opened on first use,
 * as the trigger loop's is.
 */
function openLocalEvents(settings: RuntimeSettings): {
  publish: PublishLocal;
  close(): Promise<void>;
} {
  let runtime: RedisRuntime | undefined;
  return {
    publish: (entries) => (runtime ??= new RedisRuntime(settings)).triggers.publish(entries),
    async close() {
      let timer: NodeJS.Timeout | undefined;
      // Bounded: a Redis that is away must not hold the worker's shutdown.
      await Promise.race([
        runtime?.close(),
        new Promise((done) => (timer = setTimeout(done, 2_000))),
      ]).finally(() => clearTimeout(timer));
    },
  };
}

/** The task runners: the given ones first, then the defaults, each observed (logs, spans). */
function workerRunners(
  options: WorkerOptions,
  settings: RuntimeSettings,
  log: WorkerLog,
  spans: SpanSink | undefined,
  publishLocal: PublishLocal | undefined,
): TaskRunner[] {
  // defaultRunners hands `aws` to the AWS runner whole: publishLocal reaches it.
  const aws: AwsRunnerOptions | undefined =
    publishLocal !== undefined ? { ...options.aws, publishLocal } : options.aws;
  const runners: TaskRunner[] = [
    // A Distributed Map's ItemReader and ResultWriter (internal resources no Task can name).
    ...mapRunRunners(options.itemStore),
    ...(options.taskRunners ?? []),
    ...defaultRunners({
      ...(options.egress ? { egress: options.egress } : {}),
      ...(options.httpMaxResponseBytes !== undefined
        ? { maxResponseBytes: options.httpMaxResponseBytes }
        : {}),
      ...(options.modelEndpoints ? { modelEndpoints: options.modelEndpoints } : {}),
      ...(options.secrets ? { secrets: options.secrets } : {}),
      ...(aws ? { aws } : {}),
      ...(settings.payloads ? { payloads: settings.payloads } : {}),
    }),
  ].map((runner) => observedRunner(runner, { log, spans }));
  // A Distributed Map's EXPRESS items run in this worker with its runners (the ones above).
  runners.unshift(expressChunkRunner(() => runners));
  return runners;
}
