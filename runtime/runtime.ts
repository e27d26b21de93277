import type { StateMachineDefinition } from "../engine/core/definition.js";
import type { RunEvent } from "../engine/core/events.js";
import type { HistoryEvent } from "../engine/core/history.js";
import type { Json } from "../engine/core/json.js";
import type { ApprovalStatus } from "../engine/states/approval.js";
import { ApprovalStore } from "./approvals.js";
import { answerToken, failureBody, pollActivity, successBody } from "./callbacks.js";
import {
  RuntimeError,
  type ApprovalRecord,
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
} from "./contract.js";
import { pendingTasks } from "./pending-tasks.js";
import { shortId } from "./ids.js";
import { ExecutionStore } from "./executions.js";
import { makeKeys, type Keys } from "./keys.js";
import { MachineStore } from "./machines.js";
import { readRuntimeMetrics } from "./metrics.js";
import { ExecutionCache } from "./programs.js";
import { JobQueues } from "./queues.js";
import { bullConnection, RedisClient } from "./redis.js";
import { resolveSettings, type RuntimeSettings } from "./settings.js";
import type { TransitionDeps } from "./transition.js";
import { EndWaiters } from "./waiters.js";

/**
 * The durable runtime the REST API calls (runtime/contract.ts), backed by Redis.
 * It starts, reads and stops executions and answers callbacks; worker processes
 * (runtime/worker.ts) advance them. Both sides can live in one process or many.
 */
export class RedisRuntime implements Runtime {
  readonly keys: Keys;
  readonly settings: RuntimeSettings;
  private readonly client: RedisClient;
  private readonly queues: JobQueues;
  private readonly queueConnection: ReturnType<typeof bullConnection>;
  private readonly machines: MachineStore;
  private readonly executions: ExecutionStore;
  private readonly deps: TransitionDeps;
  private readonly waiters: EndWaiters;
  private readonly approvals: ApprovalStore;
  /** Executions this runtime created (idempotent repeats not counted), for /metrics. */
  private started = 0;

  constructor(options: Partial<RuntimeSettings> = {}) {
    this.settings = resolveSettings(options);
    this.keys = makeKeys(this.settings.prefix);
    this.client = new RedisClient(this.settings.redisUrl, { name: "stepwise-runtime" });
    this.queueConnection = bullConnection(this.settings.redisUrl, "stepwise-runtime-queues");
    this.queues = new JobQueues(this.queueConnection, this.keys);
    const cache = new ExecutionCache(this.client, this.keys);
    this.machines = new MachineStore(this.client, this.keys);
    this.executions = new ExecutionStore(
      this.client,
      this.keys,
      this.machines,
      this.queues,
      cache,
      this.settings,
    );
    this.deps = {
      client: this.client,
      keys: this.keys,
      executions: cache,
      queues: this.queues,
      settings: this.settings,
    };
    this.approvals = new ApprovalStore(this.client, this.keys, this.queues, this.settings);
    this.waiters = new EndWaiters(this.settings.redisUrl, this.keys.endedChannel);
  }

  createStateMachine(
    name: string,
    definition: StateMachineDefinition,
  ): Promise<StateMachineSummary> {
    return this.machines.create(name, definition);
  }

  updateStateMachine(
    name: string,
    definition: StateMachineDefinition,
  ): Promise<StateMachineSummary & { created: boolean }> {
    return this.machines.update(name, definition);
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

  async startExecution(
    stateMachine: string,
    options: { input?: Json; name?: string; caller?: Caller },
  ): Promise<StartResult> {
    const result = await this.executions.start(stateMachine, options);
    if (result.created) this.started++;
    return result;
  }

  describeExecution(executionId: string): Promise<ExecutionRecord> {
    return this.executions.describe(executionId);
  }

  listExecutions(
    options: {
      stateMachine?: string;
      status?: ExecutionStatus;
      cursor?: string;
      limit?: number;
    } = {},
  ): Promise<Page<ExecutionSummary>> {
    return this.executions.list(options);
  }

  getHistory(
    executionId: string,
    options: { cursor?: string; limit?: number; reverse?: boolean } = {},
  ): Promise<Page<HistoryEvent>> {
    return this.executions.history(executionId, options);
  }

  stopExecution(
    executionId: string,
    options: { error?: string; cause?: string; caller?: Caller } = {},
  ): Promise<ExecutionRecord> {
    return this.executions.stop(executionId, options, this.deps);
  }

  waitForExecution(executionId: string, timeoutMs: number): Promise<ExecutionRecord> {
    return this.waiters.wait(
      executionId,
      timeoutMs,
      () => this.executions.describe(executionId),
      () => this.executions.status(executionId),
    );
  }

  async sendTaskSuccess(token: string, output: Json, caller?: Caller): Promise<void> {
    await this.refuseApprovalToken(token);
    return answerToken(this.deps, token, successBody(output), caller);
  }

  async sendTaskFailure(
    token: string,
    error?: string,
    cause?: string,
    caller?: Caller,
  ): Promise<void> {
    await this.refuseApprovalToken(token);
    return answerToken(this.deps, token, failureBody(error, cause), caller);
  }

  async sendTaskHeartbeat(token: string, caller?: Caller): Promise<void> {
    await this.refuseApprovalToken(token);
    return answerToken(
      this.deps,
      token,
      caller ? { type: "TaskHeartbeat", caller: caller.name } : { type: "TaskHeartbeat" },
      undefined,
    );
  }

  getActivityTask(
    activity: string,
    waitSeconds: number,
    workerName?: string,
  ): Promise<ActivityTask | null> {
    return pollActivity(this.deps, activity, waitSeconds, workerName);
  }

  /** An approval is answered by a decision bound to its envelope, never by its bare token. */
  private async refuseApprovalToken(token: string): Promise<void> {
    if (await this.approvals.isApprovalToken(token)) {
      throw new RuntimeError(
        "ApprovalRequiresDecision",
        "This token belongs to an approval: decide it with POST /v1/approvals/{approvalId}/decisions and its envelopeHash",
      );
    }
  }

  async pendingTasks(executionId: string): Promise<PendingTask[]> {
    await this.executions.describe(executionId); // 404 for what does not exist
    return pendingTasks(this.client, this.keys, shortId(executionId));
  }

  listApprovals(
    options: {
      status?: ApprovalStatus;
      approver?: string;
      stateMachine?: string;
      cursor?: string;
      limit?: number;
    } = {},
  ): Promise<Page<ApprovalRecord>> {
    return this.approvals.list(options);
  }

  getApproval(approvalId: string): Promise<ApprovalRecord> {
    return this.approvals.get(approvalId);
  }

  decideApproval(
    approvalId: string,
    approver: Approver,
    input: DecisionInput,
  ): Promise<ApprovalRecord> {
    return this.approvals.decide(approvalId, approver, input);
  }

  /** Transitions waiting for a worker: what admission control (api/admission.ts) watches. */
  backlog(): Promise<number> {
    return this.queues.steps.getWaitingCount();
  }

  async metrics(): Promise<RuntimeMetrics> {
    const figures = await readRuntimeMetrics(this.client, this.keys, this.queues);
    return { ...figures, executionsStartedTotal: this.started };
  }

  /** Beyond the contract: every event fed to `step`, in order (engine/replay.ts rebuilds the runs from it). */
  journal(executionId: string): Promise<{ runId: string; event: RunEvent }[]> {
    return this.executions.journal(executionId);
  }

  async close(): Promise<void> {
    await this.waiters.close();
    await this.queues.close();
    this.queueConnection.disconnect();
    await this.client.close();
  }
}

export function createRedisRuntime(options: Partial<RuntimeSettings> = {}): RedisRuntime {
  return new RedisRuntime(options);
}
