import type { ExecutionTrace } from "../tracing/trace-context.js";
import type { MeteredUsage, ModelBudget } from "../../task-runners/model/budget.js";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import type { ApprovalStatus } from "../../engine/states/approval.js";
import type { ApprovalRecord, Approver, DecisionInput } from "../approvals/approval-record.js";

export type { ApprovalRecord, Approver, DecisionInput } from "../approvals/approval-record.js";
import type {
  BulkAction,
  BulkFilter,
  BulkOptions,
  OperationRecord,
} from "../executions/bulk-operations.js";
export type {
  BulkAction,
  BulkFilter,
  BulkOptions,
  OperationRecord,
} from "../executions/bulk-operations.js";

/**
 * What the durable runtime offers the REST API (and tests): the one seam between
 * `api/` and `runtime/`. Methods throw `RuntimeError` with a stable name; the API
 * maps each name to an HTTP status in `api/errors.ts`.
 */

export interface StateMachineSummary {
  name: string;
  version: number;
  definitionHash: string;
  createdAt: string;
}

export interface StateMachineVersion extends StateMachineSummary {
  definition: StateMachineDefinition;
}

export interface StateMachineDetail extends StateMachineVersion {
  /** Every version, oldest first (without definitions). */
  versions: StateMachineSummary[];
  /** The newest version. */
  latestVersion: number;
  /** STANDARD (durable, on the workers) or EXPRESS (in the API process, no history kept). */
  type: StateMachineType;
  /** The IAM role an AWS client named; stored and shown, never assumed. */
  roleArn?: string;
  /** When the state machine (its version 1) was created. */
  machineCreatedAt: string;
  /** The model budget of its executions (a start's own budget overrides it field by field). */
  budget?: ModelBudget;
}

export type StateMachineType = "STANDARD" | "EXPRESS";

/** What AWS's CreateStateMachine/UpdateStateMachine set besides the definition. */
export interface StateMachineOptions {
  type?: StateMachineType;
  roleArn?: string;
  /** Who creates the version (recorded with it: runtime/audit/versions.ts). */
  caller?: Caller;
  /** Stepwise's: the model budget of every execution (runtime/commit/usage.ts). */
  budget?: ModelBudget;
}

/**
 * A published version (AWS's PublishStateMachineVersion): a version number that
 * may be started by its qualified ARN and routed to by aliases. Every update
 * makes a version (executions pin to it); publishing marks one as addressable.
 */
export interface PublishedVersion {
  name: string;
  version: number;
  description?: string;
  publishedAt: string;
}

/** One route of an alias: a published version and its share of starts (0–100). */
export interface AliasRoute {
  version: number;
  weight: number;
}

export interface StateMachineAlias {
  name: string;
  stateMachine: string;
  description?: string;
  routing: AliasRoute[];
  createdAt: string;
  updatedAt: string;
}

/** Something tags attach to. */
export type TaggedResource = { kind: "stateMachine" | "activity"; name: string };

export interface Activity {
  name: string;
  createdAt: string;
}

/** How an execution of an EXPRESS machine ended (StartSyncExecution). */
export interface SyncExecutionResult {
  executionId: string;
  name: string;
  stateMachine: string;
  version: number;
  status: "SUCCEEDED" | "FAILED" | "TIMED_OUT" | "ABORTED";
  input: Json;
  output?: Json;
  error?: string;
  cause?: string;
  startedAt: string;
  stoppedAt: string;
}

/** Which version a start runs: the latest, a version, or an alias's pick. */
export interface StartTarget {
  version?: number;
  alias?: string;
}

export const EXECUTION_STATUSES = [
  "RUNNING",
  /** Stepwise's own: an operator paused it (runtime/executions/pause.ts); it is still running underneath. */
  "PAUSED",
  "SUCCEEDED",
  "FAILED",
  "TIMED_OUT",
  "ABORTED",
] as const;
export type ExecutionStatus = (typeof EXECUTION_STATUSES)[number];

export interface ExecutionRecord {
  executionId: string;
  name: string;
  stateMachine: string;
  /** The definition version this execution is pinned to, forever. */
  version: number;
  status: ExecutionStatus;
  input: Json;
  output?: Json;
  error?: string;
  cause?: string;
  startedAt: string;
  stoppedAt?: string;
  /** Present when the start named a version or an alias (the version it ran). */
  pinnedVersion?: number;
  /** The alias the start went through. */
  alias?: string;
  /** A restart's source: the execution it started again (same version, same input). */
  restartedFrom?: string;
  /** How many times it was redriven, and when last (absent: never). */
  redriveCount?: number;
  redrivenAt?: string;
  /** A fork's source: the execution and the history event it was forked at. */
  forkedFrom?: { executionId: string; eventId: number };
  /** While PAUSED: why, who paused it and when. */
  pause?: PauseInfo;
  /**
   * The history's hash chain head (runtime/audit/chain.ts): the last event's id
   * and hash (id 0 and the genesis hash before the first event). Absent for an
   * execution started before the chain existed.
   */
  historyHead?: { eventId: number; hash: string };
  /**
   * The W3C trace id of the execution (runtime/tracing/): the start's `traceparent`
   * one, or one of its own. Its spans and its tasks' outgoing requests carry it.
   */
  traceId?: string;
  /** The limits on its model calls (the start's `budget`). */
  budget?: ModelBudget;
  /** What its model calls spent, all its runs together (present with a budget or after a model call). */
  usage?: MeteredUsage;
}

export interface PauseInfo {
  reason?: string;
  by?: string;
  at: string;
}

/**
 * An execution as a listing shows it: no input or output (AWS's ListExecutions
 * has neither), so a page costs the same however large the payloads are.
 */
export type ExecutionSummary = Omit<
  ExecutionRecord,
  "input" | "output" | "cause" | "pause" | "budget" | "usage" | "traceId"
>;

/** Who did something: an API key's name, recorded in the history. */
export interface Caller {
  name: string;
}

/** A task waiting on a callback, an activity worker or an approval (`GET /v1/executions/:id`). */
export interface PendingTask {
  stateName: string;
  resource: string;
  scheduledAt: string;
  timeoutAt?: string;
  heartbeatDeadline?: string;
  approvalId?: string;
  /** Shown only to callers allowed to answer it (the API strips it otherwise). */
  taskToken?: string;
}

export interface Page<T> {
  items: T[];
  /** Opaque; absent on the last page. */
  nextCursor?: string;
}

export interface StartResult {
  executionId: string;
  startedAt: string;
  /** False when an execution with this name and the same input already existed. */
  created: boolean;
}

/** What following a history yields: events as they are committed, then the end. */
export type HistoryFollowItem =
  { kind: "events"; events: HistoryEvent[] } | { kind: "end"; status: ExecutionStatus };

/** One approval change, with the record as it is when read. */
export interface ApprovalChange {
  /** Ordered and opaque: follow again after it to resume. */
  id: string;
  /** `approval.created`, `approval.decided`, `approval.approved`, `approval.rejected`, `approval.expired`, `approval.cancelled`. */
  event: string;
  approval: ApprovalRecord;
}

export interface ActivityTask {
  taskToken: string;
  input: Json;
  /** Stable across Retry attempts of one state entry: the worker's idempotency key. */
  operationKey?: string;
}

/** What a synchronous Express start takes (StartSyncExecution). */
export type SyncStartOptions = {
  input?: Json;
  name?: string;
  /** At most this long (ms), and never past AWS's 5 minutes. */
  timeoutMs?: number;
  /** The caller's W3C trace: the execution's HTTP tasks send it on. */
  trace?: ExecutionTrace;
} & StartTarget;

/** What a start takes besides the state machine (and which version or alias, `StartTarget`). */
export type StartOptions = {
  input?: Json;
  name?: string;
  caller?: Caller;
  budget?: ModelBudget;
  /** The caller's W3C trace (its `traceparent`), which the execution joins. */
  trace?: ExecutionTrace;
} & StartTarget;

/** What only the runtime knows, for /metrics; a runtime reports what it can. */
export interface RuntimeMetrics {
  /** Executions stored (within retention), by status. */
  executionsByStatus?: Partial<Record<ExecutionStatus, number>>;
  /** Executions this runtime started (not idempotent repeats) since it was created. */
  executionsStartedTotal?: number;
  /** Jobs by queue (`steps`, `tasks`) and BullMQ state (waiting, active, delayed, …). */
  queueDepth?: Record<string, Record<string, number>>;
  /** Armed timers (Wait states, retry backoffs, task and heartbeat timeouts). */
  pendingTimers?: number;
  /** Task tokens waiting for a callback. */
  pendingTaskTokens?: number;
  /** Executions a worker gave up on after a job of theirs failed every attempt (give-up.ts). */
  executionsGivenUpTotal?: number;
}

export interface Runtime {
  createStateMachine(
    name: string,
    definition: StateMachineDefinition,
    options?: StateMachineOptions,
  ): Promise<StateMachineSummary>;
  /**
   * A new version (`created: true`); executions already running stay on theirs.
   * A definition equal to the latest version's returns that version (`created: false`).
   * Without a definition only the options change (no new version).
   */
  updateStateMachine(
    name: string,
    definition: StateMachineDefinition | undefined,
    options?: Pick<StateMachineOptions, "roleArn" | "budget" | "caller">,
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
  /** Starts a bulk stop, pause, resume or purge in the background (runtime/executions/bulk-operations.ts). */
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

  /** Figures for /metrics; optional, a runtime without it has those series missing. */
  metrics?(): Promise<RuntimeMetrics>;
}

/** Stable error names of the runtime; `api/errors.ts` maps them to HTTP statuses. */
export type RuntimeErrorName =
  | "StateMachineDoesNotExist"
  | "StateMachineAlreadyExists"
  | "StateMachineVersionDoesNotExist"
  | "StateMachineVersionInUse"
  | "StateMachineAliasDoesNotExist"
  | "StateMachineAliasAlreadyExists"
  | "RevisionMismatch"
  | "InvalidRoutingConfiguration"
  | "TooManyTags"
  | "ActivityDoesNotExist"
  | "StateMachineTypeNotSupported"
  | "ExecutionDoesNotExist"
  | "ExecutionAlreadyExists"
  | "ExecutionNotRunning"
  | "ExecutionNotPaused"
  | "ExecutionRunning"
  | "OperationDoesNotExist"
  | "InvalidForkPoint"
  | "ExecutionNotRedrivable"
  | "InvalidDefinition"
  | "InvalidToken"
  | "TaskDoesNotExist"
  | "TaskTimedOut"
  | "InvalidCursor"
  | "ApprovalDoesNotExist"
  | "ApprovalNotPending"
  | "EnvelopeMismatch"
  | "ApprovalTampered"
  | "AlreadyDecided"
  | "ApprovalRequiresDecision"
  | "Forbidden"
  | "States.DataLimitExceeded";

export class RuntimeError extends Error {
  constructor(
    readonly code: RuntimeErrorName,
    message: string,
    readonly details: Json[] = [],
  ) {
    super(message);
    this.name = "RuntimeError";
  }
}
