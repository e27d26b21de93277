import type { Json } from "../../engine/core/json.js";

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
  | "ApprovalClaimed"
  | "InvalidRequest"
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
