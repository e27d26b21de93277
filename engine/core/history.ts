import type { Json } from "./json.js";

/**
 * History events, named and shaped as AWS Step Functions names them
 * (GetExecutionHistory: `id`, `previousEventId`, `timestamp`, `type` and one
 * `<kind>EventDetails` object). History is append-only: drivers store these as
 * the step returns them and never rewrite one.
 */
export interface HistoryEvent {
  id: number;
  previousEventId: number;
  timestamp: string;
  type: HistoryEventType;
  [detailsKey: `${string}EventDetails`]: Record<string, Json | undefined> | undefined;
}

/**
 * The shape of the history an execution writes, fixed when it starts: its root
 * `Started` event carries it (core/events.ts), its runs keep it (`RunState.historyFormat`)
 * and hand it to their children. Absent, the history is written as Stepwise wrote it
 * before, so that the journals of executions started then replay to the history they
 * wrote (test/golden). `HISTORY_FORMAT_AWS` is AWS's, as its recorded histories show it
 * (test/conformance/data/histories.jsonl):
 *
 * - `previousEventId` links as AWS links it: a run's first state follows the event it
 *   hangs from (0 at the top level: not ExecutionStarted; a Map iteration's
 *   MapIterationStarted; a Parallel branch's ParallelStateStarted); a Map's next
 *   iteration starts from the last event of the iteration that made room, not from
 *   that iteration's MapIterationSucceeded; `<Kind>StateSucceeded` and the state's
 *   exit both follow the last child's end; a failed join's `<Kind>StateFailed` (and a
 *   retry's `<Kind>StateStarted`) follows the failed child's last event;
 * - `<Kind>StateExited` carries the variables the state assigned (`assignedVariables`,
 *   each value as JSON text);
 * - a JSONata evaluation error (States.QueryEvaluationError) writes `EvaluationFailed`
 *   with the error, the cause, the field (`location`) and the state, then, in a Map or
 *   Parallel state, `<Kind>StateFailed`;
 * - `<Kind>StateFailed` is written once the state gives up (not before each retry);
 * - a Map iteration's or Parallel branch's error that came without a cause stays
 *   without one in its parent (ExecutionFailed without `cause`, a catcher's error
 *   output without `Cause`), where the earlier format gave it an empty one;
 * - a Map's `ToleratedFailure…` fields are read after MapStateStarted, not before.
 */
export const HISTORY_FORMAT_AWS = 2;
export type HistoryFormat = typeof HISTORY_FORMAT_AWS;

export type StateKind =
  "Pass" | "Task" | "Choice" | "Wait" | "Succeed" | "Fail" | "Parallel" | "Map";

const STATE_KINDS: readonly StateKind[] = [
  "Pass",
  "Task",
  "Choice",
  "Wait",
  "Succeed",
  "Fail",
  "Parallel",
  "Map",
];

/** `<Kind>StateEntered` and `<Kind>StateExited`, built once rather than on every transition. */
export const STATE_ENTERED = Object.fromEntries(
  STATE_KINDS.map((kind) => [kind, `${kind}StateEntered`]),
) as { readonly [K in StateKind]: `${K}StateEntered` };
export const STATE_EXITED = Object.fromEntries(
  STATE_KINDS.map((kind) => [kind, `${kind}StateExited`]),
) as { readonly [K in StateKind]: `${K}StateExited` };

export type HistoryEventType =
  | "ExecutionStarted"
  | "ExecutionSucceeded"
  | "ExecutionFailed"
  | "ExecutionAborted"
  | "ExecutionTimedOut"
  /** Stepwise's own: an operator paused or resumed the execution (runtime/executions/pause.ts). */
  | "ExecutionPaused"
  | "ExecutionResumed"
  /** Stepwise's: the first event of a fork (runtime/executions/fork.ts), naming its source and event. */
  | "ExecutionForked"
  | "ExecutionRedriven"
  | `${StateKind}StateEntered`
  | `${StateKind}StateExited`
  | "WaitStateAborted"
  /** A state's own evaluation failed (AWS: a JSONata expression, States.QueryEvaluationError). */
  | "EvaluationFailed"
  | "ActivityScheduled"
  | "ActivityStarted"
  | "ActivitySucceeded"
  | "ActivityFailed"
  | "ActivityTimedOut"
  | "LambdaFunctionScheduled"
  | "LambdaFunctionStarted"
  | "LambdaFunctionSucceeded"
  | "LambdaFunctionFailed"
  | "LambdaFunctionTimedOut"
  | "TaskScheduled"
  | "TaskStarted"
  | "TaskSubmitted"
  | "TaskSucceeded"
  | "TaskFailed"
  | "TaskTimedOut"
  | "ApprovalRequested"
  | "ApprovalDecided"
  | "ApprovalClaimed"
  | "ApprovalReleased"
  | "ApprovalDelegated"
  | "ApprovalCommented"
  | "ApprovalReminded"
  | "ApprovalEscalated"
  | "ParallelStateStarted"
  | "ParallelStateSucceeded"
  | "ParallelStateFailed"
  | "ParallelStateAborted"
  | "MapStateStarted"
  | "MapStateSucceeded"
  | "MapStateFailed"
  | "MapStateAborted"
  | "MapIterationStarted"
  | "MapIterationSucceeded"
  | "MapIterationFailed"
  | "MapIterationAborted"
  | "MapRunStarted"
  | "MapRunSucceeded"
  | "MapRunFailed"
  | "MapRunAborted"
  | "MapRunRedriven";

/** The `…EventDetails` key AWS uses for each event type. */
export function detailsKey(type: HistoryEventType): `${string}EventDetails` | undefined {
  // Looked up on every history event: memoized per type (there are few).
  let key = DETAILS_KEYS.get(type);
  if (key === undefined) {
    key = keyOf(type) ?? null;
    DETAILS_KEYS.set(type, key);
  }
  return key ?? undefined;
}

const DETAILS_KEYS = new Map<HistoryEventType, `${string}EventDetails` | null>();

function keyOf(type: HistoryEventType): `${string}EventDetails` | undefined {
  if (type.endsWith("StateEntered")) return "stateEnteredEventDetails";
  if (type.endsWith("StateExited")) return "stateExitedEventDetails";
  // ActivityScheduled → activityScheduledEventDetails, LambdaFunctionFailed → lambdaFunctionFailedEventDetails…
  if (type.startsWith("Activity") || type.startsWith("LambdaFunction")) {
    return `${type[0]!.toLowerCase()}${type.slice(1)}EventDetails`;
  }
  switch (type) {
    case "ExecutionStarted":
      return "executionStartedEventDetails";
    case "ExecutionSucceeded":
      return "executionSucceededEventDetails";
    case "ExecutionFailed":
      return "executionFailedEventDetails";
    case "ExecutionAborted":
      return "executionAbortedEventDetails";
    case "ExecutionTimedOut":
      return "executionTimedOutEventDetails";
    case "ExecutionPaused":
      return "executionPausedEventDetails";
    case "ExecutionForked":
      return "executionForkedEventDetails";
    case "ExecutionRedriven":
      return "executionRedrivenEventDetails";
    case "ExecutionResumed":
      return "executionResumedEventDetails";
    case "TaskScheduled":
      return "taskScheduledEventDetails";
    case "TaskStarted":
      return "taskStartedEventDetails";
    case "TaskSubmitted":
      return "taskSubmittedEventDetails";
    case "TaskSucceeded":
      return "taskSucceededEventDetails";
    case "TaskFailed":
      return "taskFailedEventDetails";
    case "TaskTimedOut":
      return "taskTimedOutEventDetails";
    case "ApprovalRequested":
      return "approvalRequestedEventDetails";
    case "ApprovalDecided":
      return "approvalDecidedEventDetails";
    case "ApprovalClaimed":
      return "approvalClaimedEventDetails";
    case "ApprovalReleased":
      return "approvalReleasedEventDetails";
    case "ApprovalDelegated":
      return "approvalDelegatedEventDetails";
    case "ApprovalCommented":
      return "approvalCommentedEventDetails";
    case "ApprovalReminded":
      return "approvalRemindedEventDetails";
    case "ApprovalEscalated":
      return "approvalEscalatedEventDetails";
    case "MapStateStarted":
      return "mapStateStartedEventDetails";
    case "MapIterationStarted":
      return "mapIterationStartedEventDetails";
    case "MapIterationSucceeded":
      return "mapIterationSucceededEventDetails";
    case "MapIterationFailed":
      return "mapIterationFailedEventDetails";
    case "MapIterationAborted":
      return "mapIterationAbortedEventDetails";
    case "MapRunStarted":
      return "mapRunStartedEventDetails";
    case "MapRunFailed":
      return "mapRunFailedEventDetails";
    case "MapRunRedriven":
      return "mapRunRedrivenEventDetails";
    case "EvaluationFailed":
    case "ParallelStateFailed":
    case "MapStateFailed":
      return "evaluationFailedEventDetails";
    default:
      return undefined;
  }
}

/**
 * A history event as the step writes it. A class rather than a literal: V8 then
 * keeps the details, added under a key that depends on the type, inside the
 * object instead of growing a property store for each of the many events a run
 * writes. Its own properties are exactly a HistoryEvent's, in AWS's order.
 */
class RecordedEvent implements HistoryEvent {
  [detailsKey: `${string}EventDetails`]: Record<string, Json | undefined> | undefined;

  constructor(
    public id: number,
    public previousEventId: number,
    public timestamp: string,
    public type: HistoryEventType,
  ) {}
}

/** Collects the history events one step writes, numbering them from the event's `eventId`. */
export class HistoryWriter {
  readonly events: HistoryEvent[] = [];
  private nextId: number;

  constructor(
    firstId: number,
    private previous: number,
    private readonly timestamp: string,
  ) {
    this.nextId = firstId;
  }

  /** Appends an event; returns its id. `previousEventId` chains through this run. */
  add(type: HistoryEventType, details?: Record<string, Json | undefined>): number {
    const id = this.addAside(type, details);
    this.previous = id;
    return id;
  }

  /** Appends an event that the run's next event does not follow (it follows this one's previous). */
  addAside(type: HistoryEventType, details?: Record<string, Json | undefined>): number {
    const id = this.nextId++;
    const key = detailsKey(type);
    const event = new RecordedEvent(id, this.previous, this.timestamp, type);
    if (key && details) event[key] = details;
    this.events.push(event);
    return id;
  }

  /** The next event follows event `previous` (0: none). */
  relink(previous: number): void {
    this.previous = previous;
  }

  get lastId(): number {
    return this.previous;
  }
}

/**
 * The events a caller causes (start, stop, a task token's answer), by the key AWS
 * keeps their details under; the caller's name goes next to AWS's fields.
 */
const CALLER_DETAILS: Partial<Record<HistoryEventType, `${string}EventDetails`>> = {
  ExecutionStarted: "executionStartedEventDetails",
  ExecutionForked: "executionForkedEventDetails",
  ExecutionRedriven: "executionRedrivenEventDetails",
  ExecutionPaused: "executionPausedEventDetails",
  ExecutionResumed: "executionResumedEventDetails",
  ExecutionAborted: "executionAbortedEventDetails",
  TaskSucceeded: "taskSucceededEventDetails",
  TaskFailed: "taskFailedEventDetails",
  ActivitySucceeded: "activitySucceededEventDetails",
  ActivityFailed: "activityFailedEventDetails",
};

/**
 * The one history event of a pause or a resume: written by the driver when the
 * operator acts and by replay from the journal, so both go through here. Its
 * previous event is the one before it in the history (no run wrote it).
 */
export function operatorEvent(event: {
  type: "Paused" | "Resumed";
  eventId: number;
  time: string;
  reason?: string;
  caller?: string;
}): HistoryEvent {
  const type = event.type === "Paused" ? "ExecutionPaused" : "ExecutionResumed";
  const details: Record<string, Json> = {};
  if (event.type === "Paused" && event.reason !== undefined) details.reason = event.reason;
  const history: HistoryEvent = {
    id: event.eventId,
    previousEventId: event.eventId - 1,
    timestamp: event.time,
    type,
  };
  history[detailsKey(type)!] = details;
  return event.caller === undefined ? history : withCaller([history], event.caller)[0]!;
}

/** Records who acted in the history events their action wrote (`callerName`). */
export function withCaller(history: HistoryEvent[], caller: string): HistoryEvent[] {
  return history.map((h) => {
    const key = CALLER_DETAILS[h.type];
    if (!key) return h;
    return { ...h, [key]: { ...(h[key] ?? {}), callerName: caller } };
  });
}
