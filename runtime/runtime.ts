import { otlpSink, type SpanSink } from "./tracing/sink.js";
import { newTrace, type ExecutionTrace } from "./tracing/trace-context.js";
import type { StateMachineDefinition } from "../engine/core/definition.js";
import type { RunEvent, RunEventBody } from "../engine/core/events.js";
import type { HistoryEvent } from "../engine/core/history.js";
import type { Json } from "../engine/core/json.js";
import type { ExecutionContext } from "../engine/core/run.js";
import type { ApprovalStatus } from "../engine/states/approval.js";
import { ApprovalFeed } from "./approvals/approval-feed.js";
import { ApprovalStore } from "./approvals/approval-store.js";
import { HistoryFeed } from "./executions/history-feed.js";
import { forkName, forkStart } from "./executions/fork.js";
import { checkRedrivable, redriveFrom, restoredRuns, timeoutAgain } from "./executions/redrive.js";
import { Pauses } from "./executions/pause.js";
import { purgeExecution } from "./executions/purge.js";
import { exportAudit } from "./audit/export.js";
import { loadAuditSigner, type AuditSigner } from "./audit/signing.js";
import {
  OperationStore,
  type BulkAction,
  type BulkFilter,
  type BulkOptions,
  type OperationRecord,
} from "./executions/bulk-operations.js";
import { answerToken, failureBody, pollActivity, successBody } from "./executions/callbacks.js";
import { ActivityStore } from "./definitions/activities.js";
import { AliasStore } from "./definitions/aliases.js";
import { runnerHandlers, startExpress } from "./executions/express.js";
import { TagStore } from "./definitions/tags.js";
import { VersionStore } from "./definitions/versions.js";
import { defaultRunners, type DefaultRunnerOptions } from "../task-runners/index.js";
import { DATA_LIMIT_BYTES } from "../engine/step-context.js";
import type { TaskRunner } from "../task-runners/runner.js";
import type { ModelBudget } from "../task-runners/model/budget.js";
import {
  RuntimeError,
  type ApprovalChange,
  type Activity,
  type AliasRoute,
  type PublishedVersion,
  type StartTarget,
  type StartOptions,
  type SyncStartOptions,
  type StateMachineAlias,
  type StateMachineOptions,
  type SyncExecutionResult,
  type TaggedResource,
  type ApprovalRecord,
  type HistoryFollowItem,
  type Approver,
  type DecisionInput,
  type PendingTask,
  type ActivityTask,
  Caller,
  ExecutionRecord,
  ExecutionSummary,
  ExecutionStatus,
  Page,
  Runtime,
  RuntimeMetrics,
  StartResult,
  StateMachineDetail,
  StateMachineSummary,
} from "./contract/index.js";
import { pendingTasks } from "./executions/pending-tasks.js";
import { executionArn, shortId } from "./store/ids.js";
import { ExecutionStore, execOf, newExecutionName } from "./executions/execution-store.js";
import { makeKeys, type Keys } from "./store/keys.js";
import { MachineStore } from "./definitions/machines.js";
import { readRuntimeMetrics } from "./executions/metrics.js";
import { ExecutionCache } from "./commit/execution-cache.js";
import type { Queue } from "bullmq";
import { JobQueues, operationsQueue, type OperationJob } from "./worker/queues.js";
import { bullConnection, RedisClient } from "./store/redis.js";
import { resolveSettings, type RuntimeSettings } from "./settings.js";
import { redriveExecution } from "./store/scripts/redrive-execution.js";
import { stepJob } from "./store/job-ids.js";
import type { TransitionDeps } from "./commit/transition.js";
import { EndWaiters } from "./executions/waiters.js";
import { ActivityWakeups } from "./executions/activity-wakeups.js";
import { resolveShardCount, ShardLayout } from "./shards/shards.js";
import {
  followShards,
  mergeApprovalPages,
  mergePages,
  shortIdOrSelf,
  sumMetrics,
  type Sharded,
  type ShardRoom,
} from "./shards/shard-rooms.js";

/**
 * The durable runtime the REST API calls (runtime/contract/index.ts), backed by Redis.
 * It starts, reads and stops executions and answers callbacks; worker processes
 * (runtime/worker/worker.ts) advance them. Both sides can live in one process or many.
 */
export class RedisRuntime implements Runtime {
  /**
   * The control keys (state machines, activities, operations); for a deployment of
   * one shard also that shard's keys. An execution's own keys: `keysOf`.
   */
  readonly keys: Keys;
  readonly settings: RuntimeSettings;
  private readonly client: RedisClient;
  private readonly queueConnection: ReturnType<typeof bullConnection>;
  private readonly operationsQueue: Queue<OperationJob>;
  private readonly machines: MachineStore;
  readonly operations: OperationStore;
  private readonly versions: VersionStore;
  private readonly aliases: AliasStore;
  private readonly tags: TagStore;
  private readonly activities: ActivityStore;
  /**
   * The shards, their stores and the cross-shard readers, once the deployment's
   * shard count is read (shards.ts); every execution-level call awaits it.
   */
  private readonly sharded: Promise<Sharded>;
  /** The same once it is there: closing must not wait for a Redis that never answered. */
  private opened: Sharded | undefined;
  /** What EXPRESS executions' Task states call, in this process. */
  private readonly expressRunners: TaskRunner[];
  /**
   * Where the spans of the commits this process makes (stops) go: the given sink, or
   * the OTLP exporter when the settings say `otlp`, loaded on the first stop.
   */
  private spans: Promise<SpanSink | undefined> | undefined;
  private readonly ownsSpans: boolean;
  /** Executions this runtime created (idempotent repeats not counted), for /metrics. */
  private started = 0;

  constructor(options: RuntimeOptions = {}) {
    this.settings = resolveSettings(options);
    this.ownsSpans = options.spans === undefined;
    if (options.spans) this.spans = Promise.resolve(options.spans);
    this.keys = makeKeys(this.settings.prefix);
    const failFast = this.settings.failFast;
    this.client = new RedisClient(this.settings, { name: "stepwise-runtime", failFast });
    this.queueConnection = bullConnection(this.settings, "stepwise-runtime-queues", { failFast });
    this.operationsQueue = operationsQueue(this.queueConnection, this.keys);
    this.machines = new MachineStore(this.client, this.keys);
    this.versions = new VersionStore(this.client, this.keys, this.machines);
    this.aliases = new AliasStore(this.client, this.keys, this.machines, this.versions);
    this.tags = new TagStore(this.client, this.keys);
    this.activities = new ActivityStore(this.client, this.keys);
    this.expressRunners = [
      ...(options.taskRunners ?? []),
      ...defaultRunners({
        ...options.runners,
        ...(this.settings.payloads ? { payloads: this.settings.payloads } : {}),
      }),
    ];
    this.sharded = this.openShards();
    this.sharded.then((opened) => (this.opened = opened)).catch(() => {});
    // Awaited by every call that needs it; unobserved, a failure would end the process.
    this.sharded.catch(() => {});
    this.operations = new OperationStore(
      this.client,
      this.keys,
      this.operationsQueue,
      this.settings.retentionSeconds,
    );
  }

  private async openShards(): Promise<Sharded> {
    const count = await resolveShardCount(this.client.redis, this.keys, this.settings.shards);
    const layout = new ShardLayout(this.settings.prefix, count);
    const cache = new ExecutionCache(this.client, layout, undefined, this.settings.payloads);
    const rooms = layout.shards.map((keys): ShardRoom => {
      const queues = new JobQueues(this.queueConnection, keys);
      return {
        keys,
        queues,
        executions: new ExecutionStore(
          this.client,
          keys,
          this.machines,
          queues,
          cache,
          this.settings,
        ),
        deps: { client: this.client, keys, executions: cache, queues, settings: this.settings },
        approvals: new ApprovalStore(this.client, keys, queues, this.settings),
        historyFeed: new HistoryFeed(this.client, keys),
        pauses: new Pauses(
          this.client,
          keys,
          queues,
          this.settings.leaseMs,
          this.settings.auditKeyFile,
        ),
        approvalFeed: new ApprovalFeed(this.client, keys, this.settings),
      };
    });
    return {
      layout,
      rooms,
      cache,
      waiters: new EndWaiters(
        this.settings,
        layout.shards.map((keys) => keys.endedChannel),
      ),
      activities: new ActivityWakeups(
        this.settings,
        layout.shards.map((keys) => keys.activityChannel),
      ),
    };
  }

  /** The shard of an execution (by ARN): its stores. */
  private async roomOf(executionId: string): Promise<ShardRoom> {
    const { layout, rooms } = await this.sharded;
    return rooms[layout.shardOf(shortIdOrSelf(executionId))]!;
  }

  /** Beyond the contract: the keys of an execution's shard (tests look at what it stores). */
  async keysOf(executionId: string): Promise<Keys> {
    return (await this.roomOf(executionId)).keys;
  }

  /** Beyond the contract: the deployment's shards. */
  async shardLayout(): Promise<ShardLayout> {
    return (await this.sharded).layout;
  }

  createStateMachine(
    name: string,
    definition: StateMachineDefinition,
    options?: StateMachineOptions,
  ): Promise<StateMachineSummary> {
    this.metaCache.delete(name);
    return this.machines.create(name, definition, options);
  }

  updateStateMachine(
    name: string,
    definition: StateMachineDefinition | undefined,
    options?: Pick<StateMachineOptions, "roleArn" | "budget" | "caller">,
  ): Promise<StateMachineSummary & { created: boolean }> {
    this.metaCache.delete(name);
    return this.machines.update(name, definition, options);
  }

  deleteStateMachine(name: string): Promise<void> {
    this.metaCache.delete(name);
    return this.machines.delete(name);
  }

  publishStateMachineVersion(
    name: string,
    options: { description?: string; expectedVersion?: number } = {},
  ): Promise<PublishedVersion & { created: boolean }> {
    return this.versions.publish(name, options);
  }

  listStateMachineVersions(
    name: string,
    options: { cursor?: string; limit?: number } = {},
  ): Promise<Page<PublishedVersion>> {
    return this.versions.list(name, options);
  }

  getPublishedVersion(name: string, version: number): Promise<PublishedVersion> {
    return this.versions.get(name, version);
  }

  async deleteStateMachineVersion(name: string, version: number): Promise<void> {
    const routedBy = await this.aliases.routingTo(name, version);
    return this.versions.delete(name, version, routedBy);
  }

  createStateMachineAlias(
    name: string,
    alias: string,
    options: { description?: string; routing: AliasRoute[] },
  ): Promise<StateMachineAlias & { created: boolean }> {
    return this.aliases.create(name, alias, options);
  }

  getStateMachineAlias(name: string, alias: string): Promise<StateMachineAlias> {
    return this.aliases.get(name, alias);
  }

  updateStateMachineAlias(
    name: string,
    alias: string,
    options: { description?: string; routing?: AliasRoute[] },
  ): Promise<StateMachineAlias> {
    return this.aliases.update(name, alias, options);
  }

  deleteStateMachineAlias(name: string, alias: string): Promise<void> {
    return this.aliases.delete(name, alias);
  }

  listStateMachineAliases(
    name: string,
    options: { cursor?: string; limit?: number } = {},
  ): Promise<Page<StateMachineAlias>> {
    return this.aliases.list(name, options);
  }

  async tagResource(resource: TaggedResource, tags: Record<string, string>): Promise<void> {
    await this.checkTagged(resource);
    return this.tags.tag(resource, tags);
  }

  async untagResource(resource: TaggedResource, keys: string[]): Promise<void> {
    await this.checkTagged(resource);
    return this.tags.untag(resource, keys);
  }

  async listTags(resource: TaggedResource): Promise<Record<string, string>> {
    await this.checkTagged(resource);
    return this.tags.list(resource);
  }

  private async checkTagged(resource: TaggedResource): Promise<void> {
    if (resource.kind === "stateMachine") await this.machines.latest(resource.name);
    else await this.activities.describe(resource.name);
  }

  createActivity(name: string): Promise<Activity & { created: boolean }> {
    return this.activities.create(name);
  }

  describeActivity(name: string): Promise<Activity> {
    return this.activities.describe(name);
  }

  listActivities(options: { cursor?: string; limit?: number } = {}): Promise<Page<Activity>> {
    return this.activities.list(options);
  }

  deleteActivity(name: string): Promise<void> {
    return this.activities.delete(name);
  }

  /** The version a start runs, and what it named (a version, an alias) if anything. */
  private async resolveTarget(
    machine: string,
    target: StartTarget,
    latest?: number,
  ): Promise<{ version: number; pinned?: { version: number; alias?: string } }> {
    if (target.alias !== undefined) {
      const version = await this.aliases.pick(machine, target.alias, Math.random);
      return { version, pinned: { version, alias: target.alias } };
    }
    if (target.version !== undefined) {
      await this.machines.version(machine, target.version);
      return { version: target.version, pinned: { version: target.version } };
    }
    return { version: latest ?? (await this.machines.latest(machine)) };
  }

  async startSyncExecution(
    stateMachine: string,
    options: SyncStartOptions,
  ): Promise<SyncExecutionResult> {
    return (await this.startExpress(stateMachine, options)).result;
  }

  /**
   * A machine's type and latest version, read at most once a second per process for
   * Express starts (AWS too lets starts use the previous definition shortly after an
   * update); this process's own updates and deletes drop it at once.
   */
  private readonly metaCache = new Map<
    string,
    { at: number; meta: Awaited<ReturnType<MachineStore["meta"]>> }
  >();

  private async recentMeta(name: string): Promise<Awaited<ReturnType<MachineStore["meta"]>>> {
    const hit = this.metaCache.get(name);
    const now = Date.now();
    if (hit && now - hit.at < 1000) return hit.meta;
    const meta = await this.machines.meta(name);
    if (this.metaCache.size > 10_000) this.metaCache.clear();
    this.metaCache.set(name, { at: now, meta });
    return meta;
  }

  /** Starts an EXPRESS execution in this process (StateMachineTypeNotSupported for others). */
  private async startExpress(
    stateMachine: string,
    options: SyncStartOptions,
  ): Promise<ReturnType<typeof startExpress>> {
    const meta = await this.recentMeta(stateMachine);
    if (meta.type !== "EXPRESS") {
      throw new RuntimeError(
        "StateMachineTypeNotSupported",
        `State machine '${stateMachine}' is STANDARD; only EXPRESS machines run synchronously`,
      );
    }
    const { version } = await this.resolveTarget(stateMachine, options, meta.latest);
    const input = options.input ?? {};
    if (Buffer.byteLength(JSON.stringify(input)) > DATA_LIMIT_BYTES) {
      throw new RuntimeError("States.DataLimitExceeded", "The execution input exceeds 256 KiB");
    }
    return startExpress(
      {
        machine: stateMachine,
        version,
        program: await (await this.sharded).cache.program(stateMachine, version),
        input,
        ...(options.name !== undefined ? { name: options.name } : {}),
        ...(meta.roleArn !== undefined ? { roleArn: meta.roleArn } : {}),
        ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
      },
      // Its tasks send the start's trace (or one of its own): nothing else of it is kept.
      runnerHandlers(this.expressRunners, options.trace ?? newTrace()),
    );
  }

  getStateMachine(name: string, version?: number): Promise<StateMachineDetail> {
    return this.machines.get(name, version);
  }

  listStateMachines(options?: {
    cursor?: string;
    limit?: number;
  }): Promise<Page<StateMachineSummary>> {
    return this.machines.list(options);
  }

  async startExecution(stateMachine: string, options: StartOptions): Promise<StartResult> {
    const meta = await this.machines.meta(stateMachine);
    if (meta.type === "EXPRESS") {
      // AWS: StartExecution of an Express machine answers at once; the execution runs
      // on (here, in this process) and nothing of it can be read back.
      const { executionId, startedAt } = await this.startExpress(stateMachine, options);
      this.started++;
      return { executionId, startedAt, created: true };
    }
    const { pinned } = await this.resolveTarget(stateMachine, options);
    const { version: _v, alias: _a, budget: own, ...rest } = options;
    // The machine's budget, with the start's own limits over it field by field.
    const budget = meta.budget || own ? { ...meta.budget, ...own } : undefined;
    const name = rest.name ?? newExecutionName();
    const room = await this.roomOf(executionArn(stateMachine, name));
    const result = await room.executions.start(stateMachine, {
      ...rest,
      name,
      ...(pinned ? { pinned } : {}),
      ...(budget ? { budget } : {}),
    });
    if (result.created) this.started++;
    return result;
  }

  async forkExecution(
    executionId: string,
    options: { fromEventId: number; name?: string; input?: Json; caller?: Caller },
  ): Promise<StartResult> {
    const from = await this.roomOf(executionId);
    const source = await from.executions.describe(executionId);
    const exec = execOf(executionId);
    const { program, context } = await (await this.sharded).cache.get(exec);
    const journal = await from.executions.journal(executionId);
    const history: HistoryEvent[] = [];
    let cursor: string | undefined;
    do {
      const page = await from.executions.history(executionId, {
        limit: 1000,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      history.push(...page.items);
      cursor = history.length < options.fromEventId ? page.nextCursor : undefined;
    } while (cursor !== undefined);
    const name = options.name ?? forkName();
    const { forked, restored } = forkStart(
      program,
      context,
      journal,
      history,
      options.fromEventId,
      options.input,
      executionArn(source.stateMachine, name),
    );
    // The fork is an execution of its own, on its own name's shard.
    const to = await this.roomOf(executionArn(source.stateMachine, name));
    const result = await to.executions.start(source.stateMachine, {
      input: source.input,
      pinned: { version: source.version },
      forked,
      restored,
      name,
      ...(options.caller ? { caller: options.caller } : {}),
    });
    if (result.created) this.started++;
    return result;
  }

  async redriveExecution(
    executionId: string,
    options: { clientToken?: string; caller?: Caller } = {},
  ): Promise<ExecutionRecord> {
    const exec = execOf(executionId);
    const { executions, keys, queues } = await this.roomOf(executionId);
    const { cache } = await this.sharded;
    for (let attempt = 0; ; attempt++) {
      const record = await executions.describe(executionId);
      if (options.clientToken !== undefined && record.status === "RUNNING") {
        // A repeat of a redrive that went through answers as the first did.
        const token = await this.client.redis.hget(keys.execution(exec), "rt");
        if (token === options.clientToken) return record;
      }
      checkRedrivable(record, Date.now());
      const { program, context } = await cache.get(exec);
      const plan = redriveFrom(program, context, await executions.journal(executionId));
      const point = plan.point;
      const redriveCount = (record.redriveCount ?? 0) + 1;
      const event: RunEventBody = {
        type: "Redriven",
        state: point.state,
        input: point.input,
        redriveCount,
      };
      if (point.join) event.join = point.join;
      if (options.caller) event.caller = options.caller.name;
      const reply = await this.client.call(
        redriveExecution,
        {
          execution: keys.execution(exec),
          run: keys.run(exec),
          inbox: keys.inbox(exec),
          history: keys.history(exec),
          journal: keys.journal(exec),
          schedule: keys.schedule,
          stats: keys.stats,
        },
        {
          base: keys.base,
          exec,
          event: JSON.stringify(event),
          leaseUntil: Date.now() + this.settings.leaseMs,
          status: record.status,
          redriveCount: record.redriveCount ?? 0,
          clientToken: options.clientToken || undefined,
          now: new Date().toISOString(),
          timeout: timeoutAgain(exec, program.definition.TimeoutSeconds),
          runs: restoredRuns(plan),
        },
      );
      if (reply.kind === "redriven") {
        await queues.ensure(stepJob(exec, reply.seq));
        return executions.describe(executionId);
      }
      if (reply.kind === "again") return executions.describe(executionId);
      if (reply.kind === "missing") {
        throw new RuntimeError(
          "ExecutionDoesNotExist",
          `Execution '${executionId}' does not exist`,
        );
      }
      if (attempt >= 5) throw new Error(`redrive of ${executionId} kept racing`);
    }
  }

  async restartExecution(
    executionId: string,
    options: { name?: string; caller?: Caller } = {},
  ): Promise<StartResult> {
    const source = await (await this.roomOf(executionId)).executions.describe(executionId);
    const name = options.name ?? newExecutionName();
    const to = await this.roomOf(executionArn(source.stateMachine, name));
    const result = await to.executions.start(source.stateMachine, {
      input: source.input,
      name,
      pinned: { version: source.version },
      restartedFrom: source.executionId,
      // A fresh budget: the same limits, nothing spent yet.
      ...(source.budget ? { budget: source.budget } : {}),
      ...(options.caller ? { caller: options.caller } : {}),
    });
    if (result.created) this.started++;
    return result;
  }

  async describeExecution(executionId: string): Promise<ExecutionRecord> {
    return (await this.roomOf(executionId)).executions.describe(executionId);
  }

  async listExecutions(
    options: {
      stateMachine?: string;
      status?: ExecutionStatus;
      cursor?: string;
      limit?: number;
    } = {},
  ): Promise<Page<ExecutionSummary>> {
    const { rooms } = await this.sharded;
    return mergePages(
      await Promise.all(rooms.map((room) => room.executions.list(options))),
      options.limit,
    );
  }

  async getHistory(
    executionId: string,
    options: { cursor?: string; limit?: number; reverse?: boolean } = {},
  ): Promise<Page<HistoryEvent>> {
    return (await this.roomOf(executionId)).executions.history(executionId, options);
  }

  async stopExecution(
    executionId: string,
    options: { error?: string; cause?: string; caller?: Caller } = {},
  ): Promise<ExecutionRecord> {
    // A stop commits here, not in a worker: the spans it ends are emitted here too.
    this.spans ??= this.settings.otlp
      ? otlpSink({ serviceName: "stepwise" })
      : Promise.resolve(undefined);
    const spans = await this.spans;
    const { executions, deps } = await this.roomOf(executionId);
    return executions.stop(executionId, options, spans ? { ...deps, spans } : deps);
  }

  async pauseExecution(
    executionId: string,
    options: { reason?: string; caller?: Caller } = {},
  ): Promise<ExecutionRecord> {
    const { pauses, executions } = await this.roomOf(executionId);
    await pauses.pause(executionId, execOf(executionId), options);
    return executions.describe(executionId);
  }

  async resumeExecution(
    executionId: string,
    options: { caller?: Caller } = {},
  ): Promise<ExecutionRecord> {
    const { pauses, executions } = await this.roomOf(executionId);
    await pauses.resume(executionId, execOf(executionId), options);
    return executions.describe(executionId);
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

  async purgeExecution(executionId: string): Promise<void> {
    const { keys } = await this.roomOf(executionId);
    return purgeExecution(this.client, keys, executionId, execOf(executionId));
  }

  private signer: Promise<AuditSigner> | undefined;

  /** Loaded (or generated) once per process; a failed load is tried again next time. */
  private auditSigner(): Promise<AuditSigner> {
    this.signer ??= loadAuditSigner(this.client, this.keys, this.settings.auditKeyFile).catch(
      (err: unknown) => {
        this.signer = undefined;
        throw err;
      },
    );
    return this.signer;
  }

  async exportAudit(executionId: string): Promise<string[]> {
    const { executions, keys } = await this.roomOf(executionId);
    const record = await executions.describe(executionId);
    return exportAudit(this.client, keys, await this.auditSigner(), record);
  }

  async auditPublicKey(): Promise<string> {
    return (await this.auditSigner()).publicKeyPem;
  }

  async *followHistory(
    executionId: string,
    afterEventId: number,
    signal: AbortSignal,
  ): AsyncIterable<HistoryFollowItem> {
    yield* (await this.roomOf(executionId)).historyFeed.follow(executionId, afterEventId, signal);
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

  async waitForExecution(executionId: string, timeoutMs: number): Promise<ExecutionRecord> {
    const { executions } = await this.roomOf(executionId);
    return (await this.sharded).waiters.wait(
      executionId,
      timeoutMs,
      () => executions.describe(executionId),
      () => executions.status(executionId),
    );
  }

  async sendTaskSuccess(token: string, output: Json, caller?: Caller): Promise<void> {
    const { deps } = await this.roomOfToken(token);
    return answerToken(deps, token, successBody(output), caller);
  }

  async sendTaskFailure(
    token: string,
    error?: string,
    cause?: string,
    caller?: Caller,
  ): Promise<void> {
    const { deps } = await this.roomOfToken(token);
    return answerToken(deps, token, failureBody(error, cause), caller);
  }

  async sendTaskHeartbeat(token: string, caller?: Caller): Promise<void> {
    const { deps } = await this.roomOfToken(token);
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
    return pollActivity(
      rooms.map((room) => room.deps),
      activity,
      waitSeconds,
      workerName,
      activities,
    );
  }

  /**
   * The shard that issued a token (shards.ts). An approval's token is refused: an
   * approval is answered by a decision bound to its envelope, never by its bare token.
   */
  private async roomOfToken(token: string): Promise<ShardRoom> {
    const { layout, rooms } = await this.sharded;
    const shard = layout.shardOfToken(token);
    if (shard === undefined) throw new RuntimeError("InvalidToken", "The task token is not valid");
    const room = rooms[shard]!;
    if (await room.approvals.isApprovalToken(token)) {
      throw new RuntimeError(
        "ApprovalRequiresDecision",
        "This token belongs to an approval: decide it with POST /v1/approvals/{approvalId}/decisions and its envelopeHash",
      );
    }
    return room;
  }

  async pendingTasks(executionId: string): Promise<PendingTask[]> {
    const { executions, keys } = await this.roomOf(executionId);
    await executions.describe(executionId); // 404 for what does not exist
    const { program } = await (await this.sharded).cache.get(execOf(executionId));
    return pendingTasks(this.client, keys, shortId(executionId), program);
  }

  async listApprovals(
    options: {
      status?: ApprovalStatus;
      approver?: string;
      stateMachine?: string;
      cursor?: string;
      limit?: number;
    } = {},
  ): Promise<Page<ApprovalRecord>> {
    const { rooms } = await this.sharded;
    return mergeApprovalPages(
      await Promise.all(rooms.map((room) => room.approvals.list(options))),
      options.limit,
    );
  }

  async getApproval(approvalId: string): Promise<ApprovalRecord> {
    return (await this.roomOfApproval(approvalId)).approvals.get(approvalId);
  }

  async decideApproval(
    approvalId: string,
    approver: Approver,
    input: DecisionInput,
  ): Promise<ApprovalRecord> {
    return (await this.roomOfApproval(approvalId)).approvals.decide(approvalId, approver, input);
  }

  /**
   * The shard holding an approval. Its id is a hash of its token, which alone names
   * the shard, so each shard is asked (approvals are decided at human pace); an id
   * none holds goes to shard 0, whose store answers that it does not exist.
   */
  private async roomOfApproval(approvalId: string): Promise<ShardRoom> {
    const { rooms } = await this.sharded;
    if (rooms.length === 1) return rooms[0]!;
    const held = await Promise.all(rooms.map((room) => room.approvals.holds(approvalId)));
    return rooms[held.indexOf(true)] ?? rooms[0]!;
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

export type RuntimeOptions = Partial<RuntimeSettings> & {
  taskRunners?: TaskRunner[];
  /** What the default runners of EXPRESS executions are told (egress, limits, model endpoints). */
  runners?: DefaultRunnerOptions;
  /** Where the spans of this process's commits go (default: OTLP when `otlp` is set, else none). */
  spans?: SpanSink;
};

export function createRedisRuntime(options: RuntimeOptions = {}): RedisRuntime {
  return new RedisRuntime(options);
}
