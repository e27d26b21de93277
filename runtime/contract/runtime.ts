import type { AssignAction } from "../approvals/approval-assign.js";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import type { ApprovalStatus } from "../../engine/states/approval.js";
import type {
  Activity,
  CreatedStateMachine,
  CreateStateMachineOptions,
  ActivityTask,
  AliasRoute,
  ApprovalChange,
  ApprovalRecord,
  Approver,
  BulkAction,
  BulkFilter,
  BulkOptions,
  Caller,
  DecisionInput,
  ExecutionRecord,
  ExecutionResult,
  ExecutionStatus,
  ExecutionSummary,
  HistoryFollowItem,
  OperationRecord,
  Page,
  PendingTask,
  PublishedVersion,
  RuntimeMetrics,
  StartOptions,
  StartResult,
  StateMachineAlias,
  StateMachineDetail,
  StateMachineOptions,
  StateMachineSummary,
  SyncExecutionResult,
  SyncStartOptions,
  TaggedResource,
} from "./records.js";

/**
 * What the durable runtime offers the REST API (and tests): the one seam between
 * `api/` and `runtime/`. Methods throw `RuntimeError` with a stable name
 * (errors.ts); the API maps each name to an HTTP status in `api/errors.ts`.
 * The data it takes and answers: records.ts. The Redis implementation:
 * runtime/runtime.ts (`RedisRuntime`).
 */
export interface Runtime {
  createStateMachine(
    name: string,
    definition: StateMachineDefinition,
    options?: StateMachineOptions,
  ): Promise<StateMachineSummary>;
  /**
   * AWS's CreateStateMachine in one call: creates the state machine with its tags and, with
   * `publish`, publishes its version. A machine of this name that is what the create asks for
   * (same definition as its latest version, same type, same role and budget when given, and
   * with `publish` its latest version published with the same description) is answered as it
   * is (`created: false`), nothing applied again; another is StateMachineAlreadyExists.
   * (`createStateMachine` refuses any existing machine.)
   */
  createStateMachineIdempotent(
    name: string,
    definition: StateMachineDefinition,
    options?: CreateStateMachineOptions,
  ): Promise<CreatedStateMachine>;
  /**
   * A new version (`created: true`); executions already running stay on theirs.
   * A definition equal to the latest version's returns that version (`created: false`).
   * Without a definition only the options change (no new version).
   */
  updateStateMachine(
    name: string,
    definition: StateMachineDefinition | undefined,
    options?: Pick<StateMachineOptions, "roleArn" | "budget" | "caller" | "definitionText">,
  ): Promise<StateMachineSummary & { created: boolean }>;
  /**
   * Deletes the state machine, its published versions, aliases and tags. Executions
   * already running go on to their end (their definitions stay stored), and a
   * machine created later under the same name never reuses a version number.
   */
  deleteStateMachine(name: string): Promise<void>;

  /**
   * Publishes the latest version. Publishing a version already published returns it
   * (`created: false`). `expectedVersion` refuses (RevisionMismatch) when the latest
   * version is another one.
   */
  publishStateMachineVersion(
    name: string,
    options?: { description?: string; expectedVersion?: number },
  ): Promise<PublishedVersion & { created: boolean }>;
  /** Published versions, newest first. */
  listStateMachineVersions(
    name: string,
    options?: { cursor?: string; limit?: number },
  ): Promise<Page<PublishedVersion>>;
  getPublishedVersion(name: string, version: number): Promise<PublishedVersion>;
  /** Unpublishes a version; refused (StateMachineVersionInUse) while an alias routes to it. */
  deleteStateMachineVersion(name: string, version: number): Promise<void>;

  /** Idempotent: the same routing and description return the alias; others conflict. */
  createStateMachineAlias(
    name: string,
    alias: string,
    options: { description?: string; routing: AliasRoute[] },
  ): Promise<StateMachineAlias & { created: boolean }>;
  getStateMachineAlias(name: string, alias: string): Promise<StateMachineAlias>;
  updateStateMachineAlias(
    name: string,
    alias: string,
    options: { description?: string; routing?: AliasRoute[] },
  ): Promise<StateMachineAlias>;
  deleteStateMachineAlias(name: string, alias: string): Promise<void>;
  listStateMachineAliases(
    name: string,
    options?: { cursor?: string; limit?: number },
  ): Promise<Page<StateMachineAlias>>;

  tagResource(resource: TaggedResource, tags: Record<string, string>): Promise<void>;
  untagResource(resource: TaggedResource, keys: string[]): Promise<void>;
  listTags(resource: TaggedResource): Promise<Record<string, string>>;

  /** Idempotent by name (AWS CreateActivity). */
  createActivity(name: string): Promise<Activity & { created: boolean }>;
  describeActivity(name: string): Promise<Activity>;
  listActivities(options?: { cursor?: string; limit?: number }): Promise<Page<Activity>>;
  deleteActivity(name: string): Promise<void>;

  /**
   * Runs an EXPRESS machine to its end in this process (at most `timeoutMs`), keeping
   * no history: AWS's StartSyncExecution.
   */
  startSyncExecution(stateMachine: string, options: SyncStartOptions): Promise<SyncExecutionResult>;
  getStateMachine(name: string, version?: number): Promise<StateMachineDetail>;
  listStateMachines(options?: {
    cursor?: string;
    limit?: number;
  }): Promise<Page<StateMachineSummary>>;

  /** Idempotent by `name`: the same name and input returns the same execution; another input is a conflict. */
  startExecution(stateMachine: string, options: StartOptions): Promise<StartResult>;
  describeExecution(executionId: string): Promise<ExecutionRecord>;
  listExecutions(options?: {
    stateMachine?: string;
    /** Only executions started through this version, or this alias. */
    pinnedVersion?: number;
    alias?: string;
    status?: ExecutionStatus;
    /** Only names starting with this; only this error; started in [startedAfter, startedBefore) (ms). */
    namePrefix?: string;
    error?: string;
    startedAfter?: number;
    startedBefore?: number;
    cursor?: string;
    limit?: number;
  }): Promise<Page<ExecutionSummary>>;
  getHistory(
    executionId: string,
    options?: { cursor?: string; limit?: number; reverse?: boolean },
  ): Promise<Page<HistoryEvent>>;
  stopExecution(
    executionId: string,
    options?: { error?: string; cause?: string; caller?: Caller },
  ): Promise<ExecutionRecord>;
  /**
   * The history from event `afterEventId + 1` on, as it is committed, ending once the
   * execution has ended and every event was yielded (or when `signal` aborts).
   */
  followHistory(
    executionId: string,
    afterEventId: number,
    signal: AbortSignal,
  ): AsyncIterable<HistoryFollowItem>;
  /**
   * Holds every run of the execution where it is (status PAUSED, ExecutionPaused in the
   * history); what arrives meanwhile waits in order. Pausing a paused execution changes nothing.
   */
  pauseExecution(
    executionId: string,
    options?: { reason?: string; caller?: Caller },
  ): Promise<ExecutionRecord>;
  /** Applies what waited, in order (ExecutionResumed in the history). */
  resumeExecution(executionId: string, options?: { caller?: Caller }): Promise<ExecutionRecord>;
  /** Starts a bulk stop, pause, resume or purge in the background (runtime/executions/operations/bulk.ts). */
  startOperation(
    action: BulkAction,
    filter: BulkFilter,
    options: BulkOptions,
    caller?: Caller,
  ): Promise<OperationRecord>;
  getOperation(operationId: string): Promise<OperationRecord>;
  /**
   * A new execution of the same state machine version with the same input, linked to
   * `executionId` (`restartedFrom`); the source, running or ended, is not touched.
   */
  restartExecution(
    executionId: string,
    options?: { name?: string; caller?: Caller },
  ): Promise<StartResult>;
  /**
   * A new execution on the source's version that takes up the source where it entered
   * the state of history event `fromEventId` (rebuilt by replaying its journal), with
   * that state's input replaced by `input` if given. The source is not touched.
   */
  forkExecution(
    executionId: string,
    options: { fromEventId: number; name?: string; input?: Json; caller?: Caller },
  ): Promise<StartResult>;
  /**
   * Runs a FAILED, TIMED_OUT or ABORTED execution again from the state it ended in
   * (AWS's RedriveExecution); `clientToken` makes a repeat harmless. Answers the record.
   */
  redriveExecution(
    executionId: string,
    options?: { clientToken?: string; caller?: Caller },
  ): Promise<ExecutionRecord>;
  /** Erases an ended execution now: record, history, journal, runs, approvals, index entries. */
  purgeExecution(executionId: string): Promise<void>;
  /**
   * The signed audit export of an execution (runtime/audit/document.ts): JSONL
   * lines, header, one per history event with its chain hash, signed trailer.
   */
  exportAudit(executionId: string): Promise<string[]>;
  /** The SPKI PEM public key that verifies audit exports. */
  auditPublicKey(): Promise<string>;
  /** Resolves when the execution has ended or `timeoutMs` passed (then with its RUNNING record). */
  waitForExecution(executionId: string, timeoutMs: number): Promise<ExecutionRecord>;
  /**
   * `waitForExecution` for the status and result alone (`?wait=`): an end this
   * process's worker committed answers without a read. `started`: what this
   * process's `startExecution` answered, when it just started the execution.
   */
  waitForResult(
    executionId: string,
    timeoutMs: number,
    started?: StartResult,
  ): Promise<ExecutionResult>;

  sendTaskSuccess(token: string, output: Json, caller?: Caller): Promise<void>;
  sendTaskFailure(token: string, error?: string, cause?: string, caller?: Caller): Promise<void>;
  sendTaskHeartbeat(token: string, caller?: Caller): Promise<void>;
  /** Long-poll: the next task of `activity`, or null after `waitSeconds`. */
  getActivityTask(
    activity: string,
    waitSeconds: number,
    workerName?: string,
  ): Promise<ActivityTask | null>;

  /** Tasks of the execution (its Map and Parallel children included) waiting to be answered. */
  pendingTasks(executionId: string): Promise<PendingTask[]>;

  /** The approval inbox, newest first. */
  listApprovals(options?: {
    status?: ApprovalStatus;
    approver?: string;
    stateMachine?: string;
    cursor?: string;
    limit?: number;
  }): Promise<Page<ApprovalRecord>>;
  getApproval(approvalId: string): Promise<ApprovalRecord>;
  /** Approval changes after `afterId` (none: from now on) as they are committed, until `signal` aborts. */
  followApprovals(afterId: string | undefined, signal: AbortSignal): AsyncIterable<ApprovalChange>;
  /** Records a decision bound to the envelope hash; answers the updated record. */
  decideApproval(
    approvalId: string,
    approver: Approver,
    input: DecisionInput,
  ): Promise<ApprovalRecord>;
  /** Human tasks: claims, releases, delegates or comments on an approval; answers the updated record. */
  assignApproval(
    approvalId: string,
    approver: Approver,
    input: AssignAction,
  ): Promise<ApprovalRecord>;

  /** Figures for /metrics; optional, a runtime without it has those series missing. */
  metrics?(): Promise<RuntimeMetrics>;
}
