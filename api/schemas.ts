import { EXECUTION_ID_PATTERN, EXECUTION_NAME_PATTERN } from "../runtime/store/ids.js";
import { EXECUTION_STATUSES } from "../runtime/contract/index.js";

export { EXECUTION_STATUSES };

/**
 * JSON Schemas shared by the resource plugins: request parts and response bodies.
 * They serve three purposes at once — validation (ajv), fast serialization
 * (fast-json-stringify, which also drops any field a response does not declare) and
 * the OpenAPI document — so each response field is declared here exactly once.
 */

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

/** Any JSON value (input, output, task results). */
export const anyJson = {} as const;

/** ASL error names and causes: AWS caps them at 256 and 32,768 characters. */
export const errorNameSchema = { type: "string", minLength: 1, maxLength: 256 } as const;
export const causeSchema = { type: "string", maxLength: 32768 } as const;

export const errorBody = {
  type: "object",
  required: ["error", "message", "details"],
  properties: {
    error: { type: "string", description: "A name from the error registry (api/errors.ts)." },
    message: { type: "string" },
    details: { type: "array", items: {} },
  },
} as const;

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

export const stateMachineSummary = {
  type: "object",
  required: ["name", "version", "definitionHash", "createdAt"],
  properties: {
    name: { type: "string" },
    version: { type: "integer" },
    definitionHash: { type: "string" },
    createdAt: { type: "string", format: "date-time" },
  },
} as const;

/** Limits on an execution's model calls; the next call that would go over fails with Stepwise.BudgetExceeded. */
export const modelBudget = {
  type: "object",
  additionalProperties: false,
  properties: {
    maxModelCalls: { type: "integer", minimum: 0 },
    maxInputTokens: { type: "integer", minimum: 0 },
    maxOutputTokens: { type: "integer", minimum: 0 },
    maxCostUsd: { type: "number", minimum: 0 },
  },
} as const;

export const stateMachineDetail = {
  type: "object",
  required: [
    "name",
    "version",
    "definitionHash",
    "createdAt",
    "definition",
    "versions",
    "latestVersion",
  ],
  properties: {
    ...stateMachineSummary.properties,
    definition: { type: "object", additionalProperties: true },
    latestVersion: { type: "integer" },
    versions: { type: "array", items: stateMachineSummary },
    budget: { ...modelBudget, description: "The model budget of its executions." },
  },
} as const;

export const executionRecord = {
  type: "object",
  required: ["executionId", "name", "stateMachine", "version", "status", "input", "startedAt"],
  properties: {
    executionId: { type: "string" },
    name: { type: "string" },
    stateMachine: { type: "string" },
    version: { type: "integer" },
    status: { type: "string", enum: EXECUTION_STATUSES },
    input: anyJson,
    output: anyJson,
    error: { type: "string" },
    cause: { type: "string" },
    startedAt: { type: "string", format: "date-time" },
    stoppedAt: { type: "string", format: "date-time" },
    pause: {
      type: "object",
      description: "While PAUSED: why, who paused it and when.",
      required: ["at"],
      properties: {
        reason: { type: "string" },
        by: { type: "string" },
        at: { type: "string", format: "date-time" },
      },
    },
    pinnedVersion: {
      type: "integer",
      description: "The version the start named (?version=, or an alias's pick).",
    },
    alias: { type: "string", description: "The alias the start went through." },
    restartedFrom: {
      type: "string",
      description: "A restart's source: the execution it started again.",
    },
    redriveCount: { type: "integer", description: "How many times it was redriven." },
    redrivenAt: { type: "string", format: "date-time", description: "When it was last redriven." },
    forkedFrom: {
      type: "object",
      description: "A fork's source: the execution and the history event it was forked at.",
      required: ["executionId", "eventId"],
      properties: { executionId: { type: "string" }, eventId: { type: "integer" } },
    },
    budget: {
      ...modelBudget,
      description: "The limits on its model calls (the start's `budget`).",
    },
    usage: {
      type: "object",
      description:
        "What its model calls (stepwise:model) spent, all its runs together (Map and Parallel included), as committed with their results.",
      required: ["modelCalls", "inputTokens", "outputTokens", "costUsd"],
      properties: {
        modelCalls: { type: "integer" },
        inputTokens: { type: "integer" },
        outputTokens: { type: "integer" },
        costUsd: { type: "number" },
      },
    },
    historyHead: {
      type: "object",
      description:
        "The head of the history's hash chain: the last event's id and SHA-256 (id 0 and the chain's genesis before the first event). `GET /v1/executions/:id/audit` exports the chain, signed.",
      required: ["eventId", "hash"],
      properties: { eventId: { type: "integer" }, hash: { type: "string" } },
    },
    traceId: {
      type: "string",
      pattern: "^[0-9a-f]{32}$",
      description:
        "The execution's W3C trace id: that of the start's `traceparent` header, else one of its own. Its spans (when OTEL_EXPORTER_OTLP_ENDPOINT is set), log lines and its HTTP tasks' `traceparent` carry it.",
    },
  },
} as const;

/** A listing's item: the record without input, output or cause (as AWS's ListExecutions). */
const {
  input: _input,
  output: _output,
  cause: _cause,
  pause: _pause,
  historyHead: _historyHead,
  traceId: _traceId,
  budget: _budget,
  usage: _usage,
  ...summaryProperties
} = executionRecord.properties;
export const executionSummary = {
  type: "object",
  required: executionRecord.required.filter((field) => field !== "input"),
  properties: summaryProperties,
} as const;

/** A task waiting to be answered: a callback, an activity worker, an approval. */
export const pendingTask = {
  type: "object",
  required: ["stateName", "resource", "scheduledAt"],
  properties: {
    stateName: { type: "string" },
    resource: { type: "string" },
    scheduledAt: { type: "string", format: "date-time" },
    timeoutAt: { type: "string", format: "date-time" },
    heartbeatDeadline: { type: "string", format: "date-time" },
    approvalId: { type: "string" },
    taskToken: { type: "string", description: "Only for admin and callback keys." },
  },
} as const;

/** `GET /v1/executions/:id`: the record and what it waits for. */
export const executionDetail = {
  ...executionRecord,
  required: [...executionRecord.required, "pendingTasks"],
  properties: {
    ...executionRecord.properties,
    pendingTasks: { type: "array", items: pendingTask },
  },
} as const;

/** AWS-shaped history events: `id`, `previousEventId`, `timestamp`, `type`, one `…EventDetails`. */
export const historyEvent = {
  type: "object",
  required: ["id", "previousEventId", "timestamp", "type"],
  properties: {
    id: { type: "integer" },
    previousEventId: { type: "integer" },
    timestamp: { type: "string", format: "date-time" },
    type: { type: "string" },
  },
  patternProperties: { EventDetails$: { type: "object", additionalProperties: true } },
  additionalProperties: false,
} as const;

export function page<T extends object>(items: T) {
  return {
    type: "object",
    required: ["items"],
    properties: {
      items: { type: "array", items },
      nextCursor: {
        type: "string",
        description: "Pass as `cursor` for the next page; absent on the last page.",
      },
    },
  } as const;
}

export const pagingQuery = {
  cursor: { type: "string", minLength: 1, maxLength: 1024 },
  limit: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
} as const;
