import type { ExecutionTrace } from "../tracing/trace-context.js";
import type { MeteredUsage, ModelBudget } from "../../task-runners/model/budget.js";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import type { ApprovalRecord } from "../approvals/approval-record.js";

export type { ApprovalRecord, Approver, DecisionInput } from "../approvals/approval-record.js";
export type {
  CreatedStateMachine,
  CreateStateMachineOptions,
} from "../definitions/machine-create.js";
export type {
  BulkAction,
  BulkFilter,
  BulkOptions,
  OperationRecord,
} from "../executions/operations/bulk.js";

/**
 * The data the runtime and the REST API exchange (runtime.ts names the calls):
 * state machines, executions, pages, approvals, metrics. Types only, and the
 * statuses an execution can have.
 */

export interface StateMachineSummary {
  name: string;
  version: number;
  definitionHash: string;
  createdAt: string;
}

export interface StateMachineVersion extends StateMachineSummary {
  definition: StateMachineDefinition;
  /** The definition as it was sent, when it was sent as text (StateMachineOptions). */
  definitionText?: string;
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
  /**
   * The definition's text as it was sent (JSON or YAML), kept beside the parsed
   * definition and returned byte for byte: tools that diff what they sent with what
   * they read back (Terraform) see no change. Comparisons use the canonical hash.
   */
  definitionText?: string;
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
  /** The execution whose `states:startExecution` task started this one (runtime/children/). */
  parentExecution?: string;
  /**
   * A Distributed Map's child execution: the Map Run that started it (its parent is
   * `parentExecution`); its name and ARN are the Map Run's (runtime/map-runs/child-executions.ts).
   */
  mapRunArn?: string;
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
  /**
   * A worker in this process took the new execution at once (`serve`): it is
   * RUNNING, and its end is told to this process's waiters without a read.
   */
  advancedHere?: boolean;
}

/** What `?wait=` answers of an execution: its status and result (`Runtime.waitForResult`). */
export type ExecutionResult = Pick<
  ExecutionRecord,
  "executionId" | "startedAt" | "status" | "output" | "error" | "cause" | "stoppedAt"
>;

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
  /**
   * When the execution counts as started (ISO 8601; its record's `startedAt` and
   * `$$.Execution.StartTime`), when that is not now: a schedule's tick
   * (runtime/triggers/). Never later than now; default now.
   */
  startedAt?: string;
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
  /** Executions a worker gave up on after a job of theirs failed every attempt (runtime/commit/give-up.ts). */
  executionsGivenUpTotal?: number;
}
