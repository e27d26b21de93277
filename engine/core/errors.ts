/**
 * ASL error names (ASL spec, "Errors"). The engine raises StatesError with one of
 * these names so that Retry/Catch can match them exactly as AWS does.
 */
export const PREDEFINED_ERRORS = [
  "States.ALL",
  "States.HeartbeatTimeout",
  "States.Timeout",
  "States.TaskFailed",
  "States.Permissions",
  "States.ResultPathMatchFailure",
  "States.ParameterPathFailure",
  "States.QueryEvaluationError",
  "States.BranchFailed",
  "States.NoChoiceMatched",
  "States.IntrinsicFailure",
  "States.ExceedToleratedFailureThreshold",
  "States.ItemReaderFailed",
  "States.ResultWriterFailed",
  "States.Runtime",
  "States.DataLimitExceeded",
] as const;

export type PredefinedError = (typeof PREDEFINED_ERRORS)[number];

/** An error a state raises: `error` is the ASL error name, `cause` the human-readable text. */
export class StatesError extends Error {
  constructor(
    readonly error: string,
    override readonly cause: string,
  ) {
    super(`${error}: ${cause}`);
    this.name = "StatesError";
  }
}

export function isStatesError(value: unknown): value is StatesError {
  return value instanceof StatesError;
}
