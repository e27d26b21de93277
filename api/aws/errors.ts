import { RuntimeError, type RuntimeErrorName } from "../../runtime/contract/index.js";
import { ApiError } from "../errors.js";

/**
 * Errors of the AWS endpoint, in the JSON 1.0 protocol's shape: HTTP 400 (403 and
 * 500 where AWS uses them), body `{"__type": "<Exception>", "message": "…"}` and the
 * same name in `x-amzn-errortype`, which is what the AWS SDKs read first.
 * Exception names are AWS's, per action (API reference, "Errors").
 */
export type AwsExceptionName =
  | "AccessDeniedException"
  | "ActivityDoesNotExist"
  | "ConflictException"
  | "ExecutionAlreadyExists"
  | "ExecutionDoesNotExist"
  | "ExecutionLimitExceeded"
  | "ExecutionNotRedrivable"
  | "IncompleteSignature"
  | "InternalFailure"
  | "InvalidArn"
  | "InvalidDefinition"
  | "InvalidExecutionInput"
  | "InvalidName"
  | "InvalidOutput"
  | "InvalidSignatureException"
  | "InvalidToken"
  | "MissingAuthenticationTokenException"
  | "MissingRequiredParameter"
  | "ResourceNotFound"
  | "SerializationException"
  | "StateMachineAlreadyExists"
  | "StateMachineDeleting"
  | "StateMachineDoesNotExist"
  | "StateMachineTypeNotSupported"
  | "TaskDoesNotExist"
  | "TaskTimedOut"
  | "ThrottlingException"
  | "TooManyTags"
  | "UnknownOperationException"
  | "UnrecognizedClientException"
  | "ValidationException";

const STATUS: Partial<Record<AwsExceptionName, number>> = {
  AccessDeniedException: 400,
  InternalFailure: 500,
};

export class AwsError extends Error {
  readonly status: number;

  constructor(
    readonly type: AwsExceptionName,
    message: string,
    /** ValidationException's `reason` (AWS's ValidationExceptionReason). */
    readonly reason?: string,
  ) {
    super(message);
    this.name = "AwsError";
    this.status = STATUS[type] ?? 400;
  }

  toBody(): Record<string, string> {
    const body: Record<string, string> = { __type: this.type, message: this.message };
    if (this.reason !== undefined) body.reason = this.reason;
    return body;
  }
}

export function awsError(type: AwsExceptionName, message: string, reason?: string): AwsError {
  return new AwsError(type, message, reason);
}

/** A field the request lacks or holds wrongly: AWS names the field in a ValidationException. */
export function invalidField(field: string, problem: string): AwsError {
  return new AwsError(
    "ValidationException",
    `1 validation error detected: Value at '${field}' failed to satisfy constraint: ${problem}`,
  );
}

/** The runtime's names, as AWS calls the same situations. */
const FROM_RUNTIME: Record<RuntimeErrorName, AwsExceptionName> = {
  StateMachineDoesNotExist: "StateMachineDoesNotExist",
  StateMachineAlreadyExists: "StateMachineAlreadyExists",
  StateMachineVersionDoesNotExist: "StateMachineDoesNotExist",
  StateMachineVersionInUse: "ConflictException",
  StateMachineAliasDoesNotExist: "ResourceNotFound",
  StateMachineAliasAlreadyExists: "ConflictException",
  RevisionMismatch: "ConflictException",
  InvalidRoutingConfiguration: "ValidationException",
  TooManyTags: "TooManyTags",
  ActivityDoesNotExist: "ActivityDoesNotExist",
  StateMachineTypeNotSupported: "StateMachineTypeNotSupported",
  ExecutionDoesNotExist: "ExecutionDoesNotExist",
  ExecutionAlreadyExists: "ExecutionAlreadyExists",
  ExecutionNotRunning: "ValidationException",
  // REST-only operations (pause, purge, bulk): AWS has no such action, so no exception of its own.
  ExecutionNotPaused: "ValidationException",
  ExecutionRunning: "ValidationException",
  OperationDoesNotExist: "ResourceNotFound",
  InvalidForkPoint: "ValidationException",
  ExecutionNotRedrivable: "ExecutionNotRedrivable",
  InvalidDefinition: "InvalidDefinition",
  InvalidToken: "InvalidToken",
  TaskDoesNotExist: "TaskDoesNotExist",
  TaskTimedOut: "TaskTimedOut",
  InvalidCursor: "InvalidToken",
  ApprovalDoesNotExist: "ResourceNotFound",
  ApprovalNotPending: "ConflictException",
  EnvelopeMismatch: "ConflictException",
  ApprovalTampered: "ConflictException",
  AlreadyDecided: "ConflictException",
  ApprovalClaimed: "ConflictException",
  InvalidRequest: "ValidationException",
  ApprovalRequiresDecision: "ValidationException",
  Forbidden: "AccessDeniedException",
  "States.DataLimitExceeded": "ValidationException",
};

/** Anything thrown while answering → the AWS error to send (InternalFailure when it is ours). */
export function toAwsError(error: unknown): AwsError {
  if (error instanceof AwsError) return error;
  if (error instanceof RuntimeError) {
    const type = FROM_RUNTIME[error.code];
    return new AwsError(
      type,
      error.message,
      error.code === "InvalidRoutingConfiguration" ? "INVALID_ROUTING_CONFIGURATION" : undefined,
    );
  }
  if (error instanceof ApiError) {
    switch (error.code) {
      case "PayloadTooLarge":
        return new AwsError("ValidationException", error.message);
      case "UnsupportedMediaType":
      case "InvalidJson":
        return new AwsError("SerializationException", error.message);
      case "InternalError":
        return new AwsError("InternalFailure", error.message);
      case "ThrottlingException":
        return new AwsError("ThrottlingException", error.message);
      default:
        return new AwsError("ValidationException", error.message);
    }
  }
  const e = error as { code?: string; statusCode?: number; message?: string };
  if (e.code === "FST_ERR_CTP_BODY_TOO_LARGE")
    return new AwsError("ValidationException", "The request body is larger than 1 MiB");
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500)
    return new AwsError("SerializationException", e.message ?? "malformed request");
  return new AwsError("InternalFailure", "An internal error occurred; the service logged it");
}
