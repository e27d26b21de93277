import type { RuntimeErrorName } from "../runtime/contract/index.js";

/**
 * The one registry of REST errors (after fastify's lib/errors.js): every name a
 * client can see in `{error, message, details}` has its HTTP status, a message
 * template and a one-line description here. `test/e2e/errors.test.ts` ("the error registry is documented")
 * checks that each entry appears in the OpenAPI document and in api/README.md, and
 * the type below forces every runtime error name to have an entry.
 *
 * Names are stable (clients match on them); messages may improve. Where AWS Step
 * Functions has an exception for the same situation we reuse its name
 * (StateMachineDoesNotExist, ExecutionAlreadyExists, TaskDoesNotExist, …).
 */
export interface ErrorInfo {
  readonly status: number;
  /** `{param}` placeholders are filled from the params given to `apiError`. */
  readonly template: string;
  readonly description: string;
}

function entry(status: number, template: string, description: string): ErrorInfo {
  return { status, template, description };
}

export const ERRORS = {
  // --- The request itself -------------------------------------------------------------
  InvalidRequest: entry(
    400,
    "Invalid {location}: {reason}",
    "A path parameter, query parameter, header or body field is missing, unknown or malformed; `details` holds a JSON pointer per problem.",
  ),
  InvalidJson: entry(
    400,
    "The request body is not valid JSON: {reason}",
    "The body does not parse as JSON, nests deeper than 256 levels, holds a number JSON cannot represent (1e400) or a `__proto__` key.",
  ),
  InvalidDefinition: entry(
    400,
    "The definition is invalid: {reason}",
    "The state machine definition failed validation; `details` holds the validator's diagnostics (code, message, JSON pointer, line/column for text).",
  ),
  InvalidRoutingConfiguration: entry(
    400,
    "Invalid alias routing: {reason}",
    "An alias routes to one or two distinct published versions with integer weights (0–100) adding up to 100.",
  ),
  TooManyTags: entry(
    400,
    "A resource has at most 50 tags",
    "Tagging would give the state machine or activity more than 50 tags (the AWS quota).",
  ),
  InvalidCursor: entry(
    400,
    "The cursor '{cursor}' is not one this service issued",
    "A pagination cursor was altered or belongs to another listing.",
  ),
  InvalidToken: entry(
    400,
    "The task token is malformed",
    "A task token that no Stepwise service could have issued.",
  ),
  UnsupportedMediaType: entry(
    415,
    "Content-Type '{contentType}' is not supported; send application/json or application/yaml",
    "The body's Content-Type is neither JSON nor YAML (nor text/plain).",
  ),
  PayloadTooLarge: entry(
    413,
    "The request body is larger than {limit} bytes",
    "The request body is over 1 MiB (the AWS request size quota).",
  ),
  RequestTimeout: entry(
    408,
    "The request was not received in time; the connection is closed",
    "The client sent the headers or the body too slowly (STEPWISE_HEADERS_TIMEOUT_MS, STEPWISE_REQUEST_TIMEOUT_MS).",
  ),
  RequestHeaderFieldsTooLarge: entry(
    431,
    "The request line and headers are larger than 16 KiB",
    "The URL or the headers passed Node's 16 KiB limit on a request's head.",
  ),
  "States.DataLimitExceeded": entry(
    413,
    "The {what} is {size} bytes; the limit is {limit} bytes (256 KiB)",
    "An execution input or task output over 256 KiB, the AWS payload quota. Answered with 413 so clients can tell size problems from shape problems.",
  ),

  // --- Who is asking ------------------------------------------------------------------
  Unauthorized: entry(
    401,
    "A valid API key is required: send 'Authorization: Bearer <secret>' or 'x-api-key: <secret>'",
    "No API key, or an API key this service does not know.",
  ),
  Forbidden: entry(
    403,
    "The API key '{key}' has scope '{scope}', which may not {action}",
    "The API key is valid but its scope (admin, run, callback, approve) does not cover the route, or an approver is in none of the approval's groups.",
  ),

  // --- What is asked for --------------------------------------------------------------
  RouteNotFound: entry(404, "No route {method} {url}", "The method and path match no route."),
  StateMachineDoesNotExist: entry(
    404,
    "State machine '{name}' does not exist",
    "No state machine has this name.",
  ),
  StateMachineVersionDoesNotExist: entry(
    404,
    "State machine '{name}' has no version {version}",
    "The state machine exists but not in the version asked for.",
  ),
  StateMachineAliasDoesNotExist: entry(
    404,
    "State machine '{name}' has no alias '{alias}'",
    "The state machine exists but has no alias of this name.",
  ),
  ActivityDoesNotExist: entry(
    404,
    "Activity '{name}' does not exist",
    "No activity of this name was created (POST /v1/activities).",
  ),
  ScheduleDoesNotExist: entry(
    404,
    "Schedule '{name}' does not exist",
    "No schedule of this name was created (POST /v1/schedules).",
  ),
  RuleDoesNotExist: entry(
    404,
    "Rule '{name}' does not exist",
    "No event rule of this name was created (POST /v1/rules).",
  ),
  ExecutionDoesNotExist: entry(
    404,
    "Execution '{executionId}' does not exist",
    "No execution has this id.",
  ),
  TaskDoesNotExist: entry(
    404,
    "No task is waiting for this token",
    "The token was already answered, its execution ended, or it never existed.",
  ),
  ApprovalDoesNotExist: entry(
    404,
    "Approval '{approvalId}' does not exist",
    "No approval has this id (or it ended longer ago than the retention period).",
  ),

  // --- Conflicts with what is stored --------------------------------------------------
  StateMachineAlreadyExists: entry(
    409,
    "State machine '{name}' already exists; use PUT /v1/state-machines/{name} for a new version",
    "A state machine with this name exists already.",
  ),
  ScheduleAlreadyExists: entry(
    409,
    "Schedule '{name}' already exists",
    "A schedule with this name exists already (replace it with PUT).",
  ),
  RuleAlreadyExists: entry(
    409,
    "Rule '{name}' already exists",
    "An event rule with this name exists already (replace it with PUT).",
  ),
  StateMachineAliasAlreadyExists: entry(
    409,
    "Alias '{alias}' of '{name}' already exists with other settings",
    "An alias of this name exists with another routing or description; update it instead.",
  ),
  StateMachineVersionInUse: entry(
    409,
    "Version {version} of '{name}' is routed to by an alias",
    "A published version that an alias routes to cannot be deleted; change the alias first.",
  ),
  RevisionMismatch: entry(
    409,
    "State machine '{name}' is not at the expected version",
    "A publish named a version (AWS revisionId) that is no longer the latest, or would republish a version with another description.",
  ),
  StateMachineTypeNotSupported: entry(
    409,
    "State machine '{name}' is not of the type this operation needs",
    "A synchronous start (StartSyncExecution, ?sync) of a STANDARD machine: only EXPRESS machines run synchronously.",
  ),
  ExecutionAlreadyExists: entry(
    409,
    "An execution named '{name}' already exists with a different input",
    "Idempotent start: the name is taken by an execution started with another input.",
  ),
  ExecutionNotRunning: entry(
    409,
    "Execution '{executionId}' is not running",
    "Stop, pause or resume was asked of an execution that has already ended.",
  ),
  ExecutionRunning: entry(
    409,
    "Execution '{executionId}' has not ended: stop it first, then purge it",
    "Purge was asked of an execution that is still running (or paused).",
  ),
  ExecutionNotRedrivable: entry(
    409,
    "Execution '{executionId}' cannot be redriven",
    "Only FAILED, TIMED_OUT or ABORTED executions that ended within the last 14 days can be redriven.",
  ),
  InvalidForkPoint: entry(
    400,
    "Cannot fork execution '{executionId}' at event {eventId}",
    "A fork names a state entered (a `…StateEntered` event); the message names the nearest one before it.",
  ),
  OperationDoesNotExist: entry(
    404,
    "Operation '{operationId}' does not exist",
    "No bulk operation has this id (or its record passed the retention period).",
  ),
  ExecutionNotPaused: entry(
    409,
    "Execution '{executionId}' is not paused",
    "Resume was asked of an execution that is running, not paused.",
  ),
  TaskTimedOut: entry(
    409,
    "The task for this token has timed out",
    "The callback arrived after the task's TimeoutSeconds or HeartbeatSeconds ran out.",
  ),
  ApprovalRequiresDecision: entry(
    409,
    "This token belongs to an approval; decide it through /v1/approvals",
    "The task token belongs to an approval: it is answered by a decision bound to its envelope hash (POST /v1/approvals/:id/decisions), never through /v1/task-tokens.",
  ),
  ApprovalNotPending: entry(
    409,
    "Approval '{approvalId}' is not pending",
    "The approval was already approved or rejected, expired, or was cancelled by a stop: it takes no more decisions.",
  ),
  EnvelopeMismatch: entry(
    409,
    "The envelopeHash does not match approval '{approvalId}'",
    "The decision's envelopeHash is not the approval's: the approver did not see what is to be approved. Nothing was recorded.",
  ),
  ApprovalTampered: entry(
    409,
    "Approval '{approvalId}' refuses decisions: its record was changed",
    "The approval's record no longer matches the envelope its execution's history recorded at ApprovalRequested (the record was changed in storage). It takes no decision and is flagged; the history is the source of truth.",
  ),
  ApprovalClaimed: entry(
    409,
    "Approval '{approvalId}' is claimed by another approver",
    "Another approver claimed the approval: only they decide it until they release it, delegate it or the claim expires.",
  ),
  AlreadyDecided: entry(
    409,
    "This approver has already decided approval '{approvalId}'",
    "The same approver decided twice: RequiredApprovals counts distinct approvers (with no API keys, every decision is `local`).",
  ),

  // --- How fast ---------------------------------------------------------------------
  ThrottlingException: entry(
    429,
    "Start refused: {reason}; retry in {retryAfter} s",
    "Admission control refused a start: the API key or the state machine started more than STEPWISE_START_RATE per second beyond its burst, or more than STEPWISE_MAX_BACKLOG transitions wait for a worker. Nothing was started; `Retry-After` says when to try again.",
  ),

  // --- The service --------------------------------------------------------------------
  ServiceUnavailable: entry(
    503,
    "The service is not ready: {reason}",
    "A dependency (Redis) does not answer; retry later.",
  ),
  InternalError: entry(
    500,
    "Internal error (request {requestId}); the service logged the details",
    "A bug. Nothing the client sent should cause it; please report it with the request id.",
  ),
} as const satisfies Record<string, ErrorInfo>;

export type ApiErrorName = keyof typeof ERRORS;

/** Every runtime error name must have an entry: this fails to compile otherwise. */
type MissingRuntimeErrors = Exclude<RuntimeErrorName, ApiErrorName>;
const everyRuntimeErrorHasAnEntry: MissingRuntimeErrors extends never ? true : never = true;
void everyRuntimeErrorHasAnEntry;

export const ERROR_NAMES = Object.keys(ERRORS) as ApiErrorName[];

/** The JSON body of every error answer. */
export interface ErrorBody {
  error: string;
  message: string;
  details: unknown[];
}

/** An error the API answers with; thrown from handlers and hooks, rendered by the error handler. */
export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ApiErrorName,
    message: string,
    readonly details: unknown[] = [],
  ) {
    super(message);
    this.name = "ApiError";
    this.status = ERRORS[code].status;
  }

  toBody(): ErrorBody {
    return { error: this.code, message: this.message, details: this.details };
  }
}

/** Fills a template's `{param}` placeholders; unknown ones stay visible rather than vanish. */
export function formatMessage(template: string, params: Record<string, string | number>): string {
  return template.replace(/\{(\w+)\}/g, (whole, key: string) =>
    key in params ? String(params[key]) : whole,
  );
}

export function apiError(
  code: ApiErrorName,
  params: Record<string, string | number> = {},
  details: unknown[] = [],
): ApiError {
  return new ApiError(code, formatMessage(ERRORS[code].template, params), details);
}

export function isApiErrorName(name: string): name is ApiErrorName {
  return Object.prototype.hasOwnProperty.call(ERRORS, name);
}
