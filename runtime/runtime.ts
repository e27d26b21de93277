import type { AssignAction } from "./approvals/approval-assign.js";
import type { Queue } from "bullmq";
import type { Redis } from "ioredis";
import type { StateMachineDefinition } from "../engine/core/definition.js";
import type { RunEvent } from "../engine/core/events.js";
import type { HistoryEvent } from "../engine/core/history.js";
import type { Json } from "../engine/core/json.js";
import type { ExecutionContext } from "../engine/core/run.js";
import { defaultRunners } from "../task-runners/index.js";
import type { RuntimeOptions } from "./runtime-options.js";
import { exportAudit } from "./audit/export.js";
import { loadAuditSigner, onceUntilFailed } from "./audit/signing.js";
import type {
  ActivityTask,
  ApprovalChange,
  ApprovalRecord,
  Approver,
  Caller,
  DecisionInput,
  ExecutionRecord,
  ExecutionResult,
  ExecutionSummary,
  HistoryFollowItem,
  Page,
  PendingTask,
  Runtime,
  RuntimeMetrics,
  StartOptions,
  StartResult,
  SyncExecutionResult,
  SyncStartOptions,
} from "./contract/index.js";
import { DefinitionsFacade } from "./definitions/definitions-facade.js";
import {
  OperationStore,
  type BulkAction,
  type BulkFilter,
  type BulkOptions,
  type OperationRecord,
} from "./executions/operations/bulk.js";
import { answerToken, failureBody, pollActivity, successBody } from "./executions/callbacks.js";
import { execOf } from "./executions/execution-store.js";
import { startSyncExecution } from "./executions/express.js";
import { forkExecution } from "./executions/fork.js";
import { readRuntimeMetrics } from "./executions/metrics.js";
import type { StartContext } from "./executions/operations/context.js";
import * as control from "./executions/operations/control.js";
import { restartExecution } from "./executions/operations/restart.js";
import { startExecution } from "./executions/operations/start.js";
import { pendingTasksOf } from "./executions/pending-tasks.js";
import { redriveExecution } from "./executions/redrive.js";
import { resolveSettings, type RuntimeSettings } from "./settings.js";
import { openShards, roomOfApproval, roomOfToken, shardRoomOf } from "./shards/open-shards.js";
import {
  followShards,
  mergeApprovalPages,
  sumMetrics,
  advanceStartsIn,
  type StartAdvancer,
  type ShardRoom,
  type Sharded,
} from "./shards/shard-rooms.js";
import type { ShardLayout } from "./shards/shards.js";
import { shortId } from "./store/ids.js";
import { makeKeys, type Keys } from "./store/keys.js";
import { bullConnection, RedisClient } from "./store/redis.js";
import { otlpSink, type SpanSink } from "./tracing/sink.js";

export type { RuntimeOptions } from "./runtime-options.js";
import { Triggers } from "./triggers/triggers.js";
import { MapRuns } from "./map-runs/map-run-store.js";
import { operationsQueue, type OperationJob } from "./worker/queues.js";

/**
 * The durable runtime the REST API calls (the `Runtime` interface,
 * runtime/contract/runtime.ts), backed by Redis. It starts, reads and stops
 * executions and answers callbacks; worker processes (runtime/worker/worker.ts)
 * advance them. Both sides can live in one process or many.
 *
 * A facade: each method is a line or two. State machines, versions, aliases, tags
 * and activities go to their stores (runtime/definitions/); execution operations
 * to functions of one shape over `ops`, a context this runtime holds
 * (runtime/executions/operations/context.ts explains the shape); reads, callbacks
 * and approvals to the shard they are for (runtime/shards/open-shards.ts).
 */
export class RedisRuntime extends DefinitionsFacade implements Runtime {
  /**
   * The control keys (state machines, activities, operations); for a deployment of
   * one shard also that shard's keys. An execution's own keys: `keysOf`.
   */
  readonly keys: Keys;
  readonly settings: RuntimeSettings;
  readonly operations: OperationStore;
  private readonly client: RedisClient;
  private readonly queueConnection: Redis;
  private readonly operationsQueue: Queue<OperationJob>;
  /**
   * The shards, their stores and the cross-shard readers, once the deployment's
   * shard count is read (shards/shards.ts); every execution-level call awaits it.
   */
  private readonly sharded: Promise<Sharded>;
  /** The same once it is there: closing must not wait for a Redis that never answered. */
  private opened: Sharded | undefined;
  /** What every execution operation is given (executions/operations/context.ts). */
  private readonly ops: StartContext;
  /**
   * Where the spans of the commits this process makes (stops) go: the given sink, or
   * the OTLP exporter when the settings say `otlp`, loaded on the first stop.
   */
  private spans: Promise<SpanSink | undefined> | undefined;
  private readonly ownsSpans: boolean;
  /** Executions this runtime created (idempotent repeats not counted), for /metrics. */
  private started = 0;
  /** The audit signer, loaded (or generated) once per process; a failed load is tried again. */
  private readonly auditSigner = onceUntilFailed(() =>
    loadAuditSigner(this.client, this.keys, this.settings.auditKeyFile),
  );
  /** Beyond the contract: schedules, rules and the event bus (runtime/triggers/). */
  readonly triggers: Triggers;
  /** Beyond the contract: Distributed Maps' Map Runs (runtime/map-runs/). */
  readonly mapRuns: MapRuns;

  constructor(options: RuntimeOptions = {}) {
    const settings = resolveSettings(options);
    const keys = makeKeys(settings.prefix);
    const failFast = settings.failFast;
    const client = new RedisClient(settings, { name: "stepwise-runtime", failFast });
    super(client, keys);
    this.settings = settings;
    this.keys = keys;
    this.client = client;
    this.ownsSpans = options.spans === undefined;
    if (options.spans) this.spans = Promise.resolve(options.spans);
    const queueConnection = bullConnection(settings, "stepwise-runtime-queues", { failFast });
    this.queueConnection = queueConnection;
    const queue = (this.operationsQueue = operationsQueue(queueConnection, keys));
    const machines = this.machines;
    this.sharded = openShards({ client, control: keys, settings, machines, queueConnection });
    this.sharded.then((opened) => (this.opened = opened)).catch(() => {});
    // Awaited by every call that needs it; unobserved, a failure would end the process.
    this.sharded.catch(() => {});
    this.operations = new OperationStore(client, keys, queue, settings.retentionSeconds);
    this.ops = this.operationContext(options);
    this.triggers = new Triggers(client.redis, this, settings);
    this.mapRuns = new MapRuns(client, () => this.shardLayout());
  }

  protected override deploymentOpened(): Promise<unknown> {
    return this.sharded;
  }

  private operationContext(options: RuntimeOptions): StartContext {
    const runnerOptions = {
      ...options.runners,
      ...(this.settings.payloads ? { payloads: this.settings.payloads } : {}),
    };
    return {
      client: this.client,
      settings: this.settings,
      shards: this.sharded,
      spans: () => this.stopSpans(),
      machines: this.machines,
      aliases: this.aliases,
      recentMeta: this.recentMeta,
      expressRunners: [...(options.taskRunners ?? []), ...defaultRunners(runnerOptions)],
      counted: (result) => {
        if (result.created) this.started++;
        return result;
      },
    };
  }

  /** A stop commits here, not in a worker: the spans it ends are emitted here too. */
  private stopSpans(): Promise<SpanSink | undefined> {
    this.spans ??= this.settings.otlp
      ? otlpSink({ serviceName: "stepwise" })
      : Promise.resolve(undefined);
    return this.spans;
  }

  /** The shard of an execution (by ARN): its stores. */
  private async roomOf(executionId: string): Promise<ShardRoom> {
    const sharded = await this.sharded;
    const child = await this.mapRuns.childRoom(sharded.rooms, executionId);
    return child ?? shardRoomOf(sharded, executionId);
  }

  /** Beyond the contract: the keys of an execution's shard (tests look at what it stores). */
  async keysOf(executionId: string): Promise<Keys> {
    return (await this.roomOf(executionId)).keys;
  }

  /** Beyond the contract: the deployment's shards. */
  async shardLayout(): Promise<ShardLayout> {
    return (await this.sharded).layout;
  }

  // Execution operations: runtime/executions/ (executions/operations/context.ts: their shape).

  startExecution(stateMachine: string, options: StartOptions): Promise<StartResult> {
    return startExecution(this.ops, stateMachine, options);
  }

  startSyncExecution(
    stateMachine: string,
    options: SyncStartOptions,
  ): Promise<SyncExecutionResult> {
    return startSyncExecution(this.ops, stateMachine, options);
  }

  restartExecution(
    executionId: string,
    options?: { name?: string; caller?: Caller },
  ): Promise<StartResult> {
    return restartExecution(this.ops, executionId, options);
  }

  forkExecution(
    executionId: string,
    options: { fromEventId: number; name?: string; input?: Json; caller?: Caller },
  ): Promise<StartResult> {
    return forkExecution(this.ops, executionId, options);
  }

  redriveExecution(
    executionId: string,
    options?: { clientToken?: string; caller?: Caller },
  ): Promise<ExecutionRecord> {
    return redriveExecution(this.ops, executionId, options);
  }

  async stopExecution(
    executionId: string,
    options?: { error?: string; cause?: string; caller?: Caller },
  ): Promise<ExecutionRecord> {
    return control.stopExecution(this.ops, executionId, options, await this.roomOf(executionId));
  }

  pauseExecution(
    executionId: string,
    options?: { reason?: string; caller?: Caller },
  ): Promise<ExecutionRecord> {
    return control.pauseExecution(this.ops, executionId, options);
  }

  resumeExecution(executionId: string, options?: { caller?: Caller }): Promise<ExecutionRecord> {
    return control.resumeExecution(this.ops, executionId, options);
  }

  purgeExecution(executionId: string): Promise<void> {
    return control.purgeExecution(this.ops, executionId);
  }

  listExecutions(
    options: Parameters<Runtime["listExecutions"]>[0] = {},
  ): Promise<Page<ExecutionSummary>> {
    return control.listExecutions(this.ops, options);
  }

  startOperation(
    action: BulkAction,
    filter: BulkFilter,
    options: BulkOptions,
    caller?: Caller,
  ): Promise<OperationRecord> {
    return this.operations.start(action, filter, options, caller);
  }

  getOperation(operationId: string): Promise<OperationRecord> {
    return this.operations.get(operationId);
  }

  // Reads of an execution: its shard's stores.

  async describeExecution(executionId: string): Promise<ExecutionRecord> {
    return (await this.roomOf(executionId)).executions.describe(executionId);
  }

  async getHistory(
    executionId: string,
    options: { cursor?: string; limit?: number; reverse?: boolean } = {},
  ): Promise<Page<HistoryEvent>> {
    return (await this.roomOf(executionId)).executions.history(executionId, options);
  }

  async *followHistory(
    executionId: string,
    afterEventId: number,
    signal: AbortSignal,
  ): AsyncIterable<HistoryFollowItem> {
    yield* (await this.roomOf(executionId)).historyFeed.follow(executionId, afterEventId, signal);
  }

  async waitForExecution(id: string, ms: number): Promise<ExecutionRecord> {
    const { executions: x } = await this.roomOf(id);
    const read = { describe: () => x.describe(id), status: () => x.status(id) };
    return (await this.sharded).waiters.wait(id, ms, read.describe, read.status);
  }

  async waitForResult(id: string, ms: number, started?: StartResult): Promise<ExecutionResult> {
    const { executions } = await this.roomOf(id);
    return (await this.sharded).waiters.waitResult(id, ms, executions, started);
  }

  async pendingTasks(executionId: string): Promise<PendingTask[]> {
    const room = await this.roomOf(executionId);
    return pendingTasksOf(this.client, room, (await this.sharded).cache, executionId);
  }

  async exportAudit(executionId: string): Promise<string[]> {
    const { executions, keys } = await this.roomOf(executionId);
    const record = await executions.describe(executionId);
    return exportAudit(this.client, keys, await this.auditSigner(), record);
  }

  async auditPublicKey(): Promise<string> {
    return (await this.auditSigner()).publicKeyPem;
  }

  // Callbacks and activities: the shard that issued the token (runtime/executions/callbacks.ts).

  async sendTaskSuccess(token: string, output: Json, caller?: Caller): Promise<void> {
    const { deps } = await roomOfToken(await this.sharded, token);
    return answerToken(deps, token, successBody(output), caller);
  }

  async sendTaskFailure(
    token: string,
    error?: string,
    cause?: string,
    caller?: Caller,
  ): Promise<void> {
    const { deps } = await roomOfToken(await this.sharded, token);
    return answerToken(deps, token, failureBody(error, cause), caller);
  }

  async sendTaskHeartbeat(token: string, caller?: Caller): Promise<void> {
    const { deps } = await roomOfToken(await this.sharded, token);
    return answerToken(
      deps,
      token,
      caller ? { type: "TaskHeartbeat", caller: caller.name } : { type: "TaskHeartbeat" },
      undefined,
    );
  }

  async getActivityTask(
    activity: string,
    waitSeconds: number,
    workerName?: string,
  ): Promise<ActivityTask | null> {
    const { rooms, activities } = await this.sharded;
    const deps = rooms.map((room) => room.deps);
    return pollActivity(deps, activity, waitSeconds, workerName, activities);
  }

  // Approvals: every shard's inbox, or the shard holding the approval.

  async listApprovals(
    options: Parameters<Runtime["listApprovals"]>[0] = {},
  ): Promise<Page<ApprovalRecord>> {
    const { rooms } = await this.sharded;
    const pages = await Promise.all(rooms.map((room) => room.approvals.list(options)));
    return mergeApprovalPages(pages, options.limit);
  }

  async getApproval(approvalId: string): Promise<ApprovalRecord> {
    return (await roomOfApproval(await this.sharded, approvalId)).approvals.get(approvalId);
  }

  async decideApproval(
    approvalId: string,
    approver: Approver,
    input: DecisionInput,
  ): Promise<ApprovalRecord> {
    const { approvals } = await roomOfApproval(await this.sharded, approvalId);
    return approvals.decide(approvalId, approver, input);
  }

  async assignApproval(id: string, who: Approver, input: AssignAction): Promise<ApprovalRecord> {
    return (await roomOfApproval(await this.sharded, id)).approvals.assign(id, who, input);
  }

  async *followApprovals(
    afterId: string | undefined,
    signal: AbortSignal,
  ): AsyncIterable<ApprovalChange> {
    const { rooms } = await this.sharded;
    yield* followShards(
      rooms.map((room) => room.approvalFeed),
      afterId,
      signal,
    );
  }

  /** Transitions waiting for a worker: what admission control (api/admission.ts) watches. */
  async backlog(): Promise<number> {
    const { rooms } = await this.sharded;
    const counts = await Promise.all(rooms.map((room) => room.queues.steps.getWaitingCount()));
    return counts.reduce((a, b) => a + b, 0);
  }

  async metrics(): Promise<RuntimeMetrics> {
    const { rooms } = await this.sharded;
    const figures = await Promise.all(
      rooms.map((room) => readRuntimeMetrics(this.client, room.keys, room.queues)),
    );
    return { ...sumMetrics(figures), executionsStartedTotal: this.started };
  }

  /** Beyond the contract: what `step` ran the execution with (its context and definition), for replay. */
  async executionContext(
    executionId: string,
  ): Promise<{ context: ExecutionContext; definition: StateMachineDefinition }> {
    const { context, program } = await (await this.sharded).cache.get(execOf(executionId));
    return { context, definition: program.definition };
  }

  /** Beyond the contract: every event fed to `step`, in order (engine/replay.ts rebuilds the runs from it). */
  async journal(executionId: string): Promise<{ runId: string; event: RunEvent }[]> {
    return (await this.roomOf(executionId)).executions.journal(executionId);
  }

  /** `serve`: its worker advances the executions it starts, without the queue (shard-rooms.ts). */
  async advanceStartsWith(worker: StartAdvancer): Promise<void> {
    advanceStartsIn(await this.sharded, worker);
  }

  async close(): Promise<void> {
    if (this.ownsSpans) await (await this.spans)?.close();
    const sharded = this.opened;
    if (sharded) {
      await sharded.waiters.close();
      sharded.activities.close();
      for (const room of sharded.rooms) {
        await room.approvalFeed.close();
        await room.queues.close();
      }
    }
    await this.operationsQueue.close();
    this.queueConnection.disconnect();
    await this.client.close();
  }
}

export function createRedisRuntime(options: RuntimeOptions = {}): RedisRuntime {
  return new RedisRuntime(options);
}
