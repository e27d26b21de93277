import type { APPROVAL_STATUSES as ENGINE_APPROVAL_STATUSES } from "../engine/states/approval.js";
import type { EXECUTION_STATUSES as RUNTIME_EXECUTION_STATUSES } from "../runtime/contract/index.js";
import { EXECUTION_ID_PATTERN, EXECUTION_NAME_PATTERN } from "../runtime/store/ids.js";
import type { Permission, Scope } from "./auth.js";
import {
  APPROVAL_STATUSES,
  EXECUTION_STATUSES,
  errorBody,
  PERMISSIONS,
  SCOPES,
} from "./response-schemas.js";

/**
 * JSON Schemas shared by the resource plugins: request parts and response bodies.
 * They serve three purposes at once — validation (ajv), fast serialization
 * (fast-json-stringify, which also drops any field a response does not declare) and
 * the OpenAPI document — so each response field is declared exactly once. The
 * response bodies live in api/response-schemas.ts, which imports nothing so that
 * api/shapes.ts can derive their TypeScript types for the console too; they are
 * re-exported here, the one place the plugins take schemas from.
 */
export {
  anyJson,
  APPROVAL_STATUSES,
  approvalDecision,
  approvalRecord,
  busEvent,
  errorBody,
  EXECUTION_STATUSES,
  executionDetail,
  executionRecord,
  executionSummary,
  historyEvent,
  listOf,
  me,
  modelBudget,
  operationRecord,
  OVERLAP_POLICIES,
  page,
  pendingTask,
  PERMISSIONS,
  putEventsAnswer,
  rule,
  schedule,
  scheduleBackfill,
  scheduleTarget,
  SCOPES,
  SKIPPED_REASONS,
  stateMachineDetail,
  stateMachineSummary,
} from "./response-schemas.js";

/** True when A and B are the same type (for tuples: the same members in the same order). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;

/**
 * api/response-schemas.ts writes its enum lists out (it may import nothing): each must
 * be the runtime's exactly, or this fails to compile. Types only: nothing at run time.
 */
export type WireListsMatch = [
  Assert<Same<typeof EXECUTION_STATUSES, typeof RUNTIME_EXECUTION_STATUSES>>,
  Assert<Same<typeof APPROVAL_STATUSES, typeof ENGINE_APPROVAL_STATUSES>>,
  Assert<Same<(typeof SCOPES)[number], Scope>>,
  Assert<Same<(typeof PERMISSIONS)[number], Exclude<Permission, "public">>>,
];

/**
 * Names of state machines and activities: AWS's rule (1–80 characters) narrowed to
 * letters, digits, `_`, `.` and `-`, since such a name is a URL path segment of its
 * own (`/v1/state-machines/:name`); "." and ".." are refused outright.
 */
export const NAME_PATTERN = "^(?!\\.\\.?$)[A-Za-z0-9_.-]{1,80}$";
export const nameSchema = { type: "string", pattern: NAME_PATTERN } as const;

/**
 * Execution names: exactly what AWS's StartExecution accepts (runtime/store/ids.ts), since
 * clients move between the two; an execution name only ever travels inside an id.
 */
export const executionNameSchema = { type: "string", pattern: EXECUTION_NAME_PATTERN } as const;

/** Execution ids are issued by the runtime; any id of a valid name passes, other text does not. */
export { EXECUTION_ID_PATTERN };
/** The rules behind the patterns, in words, for error messages (a regex is no explanation). */
export const PATTERN_RULES: ReadonlyMap<string, string> = new Map([
  [NAME_PATTERN, "1–80 letters, digits, '_', '.' or '-' (not '.' or '..')"],
  [
    EXECUTION_NAME_PATTERN,
    '1–80 characters, none of them white space, a control character or one of < > { } [ ] ? * " # % \\ ^ | ~ ` $ & , ; : /',
  ],
  [EXECUTION_ID_PATTERN, "an execution ARN (arn:aws:states:…:execution:<state machine>:<name>)"],
]);

/** Task tokens are opaque (AWS allows up to 1024 characters), URL-safe by construction. */
export const TASK_TOKEN_PATTERN = "^[A-Za-z0-9_.:=~-]{1,1024}$";

/** ASL error names and causes: AWS caps them at 256 and 32,768 characters. */
export const errorNameSchema = { type: "string", minLength: 1, maxLength: 256 } as const;
export const causeSchema = { type: "string", maxLength: 32768 } as const;

/** Error answers every route may give. */
export const errorResponses = {
  "4xx": errorBody,
  "5xx": errorBody,
} as const;

export const diagnosticSchema = {
  type: "object",
  required: ["code", "severity", "message", "path"],
  properties: {
    code: { type: "string" },
    severity: { type: "string", enum: ["error", "warning"] },
    message: { type: "string" },
    path: { type: "string", description: "JSON pointer into the definition." },
    line: { type: "integer" },
    column: { type: "integer" },
  },
} as const;

export const pagingQuery = {
  cursor: { type: "string", minLength: 1, maxLength: 1024 },
  limit: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
} as const;
