/**
 * What the trigger stores refuse. `InvalidRequest` names the field (a JSON pointer
 * into the request body), so the API answers 400 pointing at it; the others are
 * entries of api/errors.ts.
 */
export type TriggerErrorName =
  | "InvalidRequest"
  | "ScheduleDoesNotExist"
  | "ScheduleAlreadyExists"
  | "RuleDoesNotExist"
  | "RuleAlreadyExists";

export class TriggerError extends Error {
  constructor(
    readonly code: TriggerErrorName,
    message: string,
    /** JSON pointer of the offending field (InvalidRequest). */
    readonly pointer?: string,
  ) {
    super(message);
    this.name = "TriggerError";
  }
}

export function invalid(pointer: string, message: string): TriggerError {
  return new TriggerError("InvalidRequest", message, pointer);
}
