import type { operationRecord } from "../../../api/response-schemas.js";
import type { ExecutionStatus, FromSchema } from "../../../api/shapes.js";

/**
 * The shapes the console reads from the REST API. They are not declared here: they
 * are the types api/shapes.ts derives from the API's own JSON Schemas
 * (api/response-schemas.ts), taken with `import type` so that the browser bundle
 * holds nothing of the server (test/console/shapes.test.ts checks both).
 */
export type {
  ApprovalDecision,
  ApprovalRecord as Approval,
  ApprovalStatus,
  BusEvent,
  ErrorBody as ApiErrorBody,
  EventRule,
  ExecutionDetail,
  ExecutionRecord,
  ExecutionStatus,
  ExecutionSummary,
  HistoryEvent,
  Json,
  List,
  Me,
  Page,
  PendingTask,
  Permission,
  PutEventsAnswer,
  Schedule,
  ScheduleBackfill,
  StateMachineDetail,
  StateMachineSummary,
} from "../../../api/shapes.js";

/**
 * A bulk operation and its progress (`GET /v1/operations/:id`), derived here from its
 * schema as api/shapes.ts derives the others.
 */
export type OperationRecord = FromSchema<typeof operationRecord>;

/**
 * The statuses, in the order the filter offers them. A value, so it is written out
 * here (the bundle takes nothing from api/); the checks below fail to compile if it
 * misses a status of the API's schema or names one the schema does not have.
 */
export const EXECUTION_STATUSES = [
  "RUNNING",
  "PAUSED",
  "SUCCEEDED",
  "FAILED",
  "TIMED_OUT",
  "ABORTED",
] as const satisfies readonly ExecutionStatus[];
type Assert<T extends true> = T;
export type EveryStatusListed = Assert<
  [Exclude<ExecutionStatus, (typeof EXECUTION_STATUSES)[number]>] extends [never] ? true : false
>;

/** Running or paused: not ended (a paused execution still runs underneath). */
export function isLive(status: ExecutionStatus): boolean {
  return status === "RUNNING" || status === "PAUSED";
}
