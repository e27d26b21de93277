import type { Json } from "./json.js";
import type { HistoryEventType, StateKind } from "./history.js";

/**
 * What each history event records in its `…EventDetails`, one type per event
 * type: `StepContext.record` takes exactly these, so an event cannot be written
 * with a field missing, misspelt or of the wrong kind. Fields are AWS's where AWS
 * has the event (API reference, "HistoryEvent"); `operationKey`, `restartedFrom`
 * and the approval events are Stepwise's. JSON payloads are JSON texts, as AWS
 * returns them. `callerName` is added later by the driver (history.ts `withCaller`).
 */
type Text = string;

/** A Task's resource, as AWS splits it (`resourceType` "lambda", `resource` "invoke"). */
type Resource = { resourceType: string; resource: string };
type Failure = { error?: string | undefined; cause?: string | undefined };
type Nothing = Record<string, never>;
type Iteration = { name: string; index: number };

/** What every assignment event of an approval records. */
interface ApprovalNote {
  [field: string]: Json | undefined;
  approvalId: string;
  by: string;
}

type Fixed = {
  ExecutionStarted: {
    input: Text;
    roleArn: string;
    stateMachineAliasArn?: string;
    stateMachineVersionArn?: string;
    restartedFrom?: string;
  };
  ExecutionSucceeded: { output: Text };
  ExecutionFailed: Failure;
  ExecutionAborted: Failure;
  ExecutionTimedOut: Failure;
  ExecutionPaused: { reason?: string };
  ExecutionResumed: Nothing;
  ExecutionForked: {
    sourceExecutionArn: string;
    sourceEventId: number;
    input: Text;
    roleArn: string;
  };
  ExecutionRedriven: { redriveCount: number };
  WaitStateAborted: Nothing;
  /** AWS's EvaluationFailedEventDetails: `location` names the field, where there is one. */
  EvaluationFailed: { error: string; cause: string; location?: string; state: string };
  ActivityScheduled: {
    resource: string;
    input: Text;
    timeoutInSeconds?: number | undefined;
    heartbeatInSeconds?: number | undefined;
    operationKey: string;
  };
  ActivityStarted: { workerName?: string };
  ActivitySucceeded: { output: Text };
  ActivityFailed: Failure;
  ActivityTimedOut: Failure;
  LambdaFunctionScheduled: {
    resource: string;
    input: Text;
    timeoutInSeconds?: number | undefined;
    operationKey: string;
  };
  LambdaFunctionStarted: Nothing;
  LambdaFunctionSucceeded: { output: Text };
  LambdaFunctionFailed: Failure;
  LambdaFunctionTimedOut: Failure;
  TaskScheduled: Resource & {
    region: string;
    parameters: Text;
    timeoutInSeconds?: number | undefined;
    heartbeatInSeconds?: number | undefined;
    operationKey: string;
  };
  TaskStarted: Resource;
  TaskSubmitted: Resource & { output: Text };
  TaskSucceeded: Resource & { output: Text };
  TaskFailed: Resource & Failure;
  TaskTimedOut: Resource & Failure;
  ApprovalRequested: { [field: string]: Json } & {
    approvalId: string;
    envelopeHash: string;
    details: Text;
  };
  ApprovalDecided: {
    approvalId: string;
    envelopeHash: string;
    approver: string;
    decision: "APPROVE" | "REJECT" | "EDIT" | "RESPOND";
    comment: string | null;
    decidedAt: string;
    status: string;
    /** The decision's answer to the approval's ResponseSchema (JSON text), when sent. */
    response?: Text;
    /** EDIT: the RFC 6902 patch against the details shown (JSON text). */
    patch?: Text;
  };
  /** Human tasks: who claimed, released, delegated (to whom) or commented (what). */
  ApprovalClaimed: ApprovalNote & { until: string };
  ApprovalReleased: ApprovalNote;
  ApprovalDelegated: ApprovalNote & { toUser?: string; toGroup?: string; comment: string | null };
  ApprovalCommented: ApprovalNote & { comment: string };
  /** A reminder (`Reminders`) or the escalation (`Escalation`) fired while it was pending. */
  ApprovalReminded: { approvalId: string; reminder: number };
  ApprovalEscalated: { approvalId: string; groups: string[] };
  ParallelStateStarted: Nothing;
  ParallelStateSucceeded: Nothing;
  ParallelStateFailed: Failure;
  ParallelStateAborted: Nothing;
  MapStateStarted: { length: number };
  MapStateSucceeded: Nothing;
  MapStateFailed: Failure;
  MapStateAborted: Nothing;
  MapIterationStarted: Iteration;
  MapIterationSucceeded: Iteration;
  MapIterationFailed: Iteration;
  MapIterationAborted: Iteration;
  MapRunStarted: { mapRunArn: string };
  MapRunSucceeded: Nothing;
  MapRunFailed: Failure;
  MapRunAborted: Nothing;
  /** AWS's MapRunRedrivenEventDetails: the count includes this redrive (always > 0). */
  MapRunRedriven: { mapRunArn: string; redriveCount: number };
};

export type HistoryDetails = Fixed & {
  [K in `${StateKind}StateEntered`]: { name: string; input: Text };
} & {
  [K in `${StateKind}StateExited`]: {
    name: string;
    output: Text;
    /** The variables the state assigned, each value as JSON text (HISTORY_FORMAT_AWS). */
    assignedVariables?: Record<string, Text>;
  };
};

/** The details argument of `record(type, …)`: omitted for events that record nothing. */
export type DetailsArg<T extends HistoryEventType> = Nothing extends HistoryDetails[T]
  ? [details?: HistoryDetails[T]]
  : [details: HistoryDetails[T]];
