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
  override readonly cause: string;
  /**
   * False when the failure came without any cause (a task failure reported with an
   * error name only): its error output then has no `Cause` field, as AWS documents
   * (`{"Error": "Error here"}`, developer guide, "Use ResultPath to Include Both
   * Error and Input in a Catch").
   */
  readonly hasCause: boolean;
  /**
   * The field whose evaluation failed (`Output/result`, `Items`), where one did: AWS's
   * EvaluationFailed event names it (`location`).
   */
  location?: string;
  constructor(
    readonly error: string,
    cause: string | undefined,
  ) {
    super(`${error}: ${cause ?? ""}`);
    this.name = "StatesError";
    this.cause = cause ?? "";
    this.hasCause = cause !== undefined;
  }
}

export function isStatesError(value: unknown): value is StatesError {
  return value instanceof StatesError;
}
