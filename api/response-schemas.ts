/**
 * The JSON Schemas of what the REST API answers: the execution record and its
 * listing and detail forms, history events, state machines, approval records,
 * schedules, event rules and bus events, `GET /v1/me`, pages and errors. Served through api/schemas.ts (validation, fast
 * serialization, the OpenAPI document); api/shapes.ts derives their TypeScript types.
 *
 * This module imports nothing, on purpose: the console type-checks it (through
 * api/shapes.ts) with browser settings and no Node types, so an import here would
 * drag server code into the console's program (test/console/shapes.test.ts fails).
 * That is why the enum lists below are written out: api/schemas.ts checks at
 * compile time that each is exactly the runtime's (EXECUTION_STATUSES,
 * APPROVAL_STATUSES, the scopes and permissions of api/auth.ts).
 */

/** The statuses of an execution, as runtime/contract's EXECUTION_STATUSES. */
export const EXECUTION_STATUSES = [
  "RUNNING",
  "PAUSED",
  "SUCCEEDED",
  "FAILED",
  "TIMED_OUT",
  "ABORTED",
] as const;

/** The statuses of an approval record, as engine/states/approval.ts's APPROVAL_STATUSES. */
export const APPROVAL_STATUSES = [
  "PENDING",
  "APPROVED",
  "REJECTED",
  "EXPIRED",
  "CANCELLED",
] as const;

/** API key scopes, as api/auth.ts's SCOPES. */
export const SCOPES = ["admin", "run", "callback", "approve"] as const;

/** What a key may be granted, as api/auth.ts's permissionsOf("admin") (every permission but `public`). */
export const PERMISSIONS = [
  "identity",
  "definitions:write",
  "definitions:read",
  "executions:write",
  "executions:read",
  "executions:purge",
  "callback",
  "approvals:read",
  "approvals:decide",
] as const;

/** Any JSON value (input, output, task results). */
export const anyJson = {} as const;

export const errorBody = {
  type: "object",
  required: ["error", "message", "details"],
  properties: {
    error: { type: "string", description: "A name from the error registry (api/errors.ts)." },
    message: { type: "string" },
    details: { type: "array", items: {} },
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
    definitionText: {
      type: "string",
      description:
        "The definition as it was sent (JSON or YAML text), byte for byte; absent when it was sent as an object or is exactly `definition`'s JSON.",
    },
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
    parentExecution: {
      type: "string",
      description:
        "The execution ARN of the parent whose `arn:aws:states:::states:startExecution` task (fire and forget, `.sync`, `.sync:2` or `.waitForTaskToken`) started this one; absent for an execution started otherwise.",
    },
    mapRunArn: {
      type: "string",
      description:
        "A Distributed Map's child execution (one per item or batch): the Map Run that started it; `parentExecution` names the execution whose Map state ran the Map Run.",
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

/** A list answered whole (`GET /v1/schedules`, `/v1/rules`): no cursor. */
export function listOf<T extends object>(items: T) {
  return {
    type: "object",
    required: ["items"],
    properties: { items: { type: "array", items } },
  } as const;
}

/*
 * Triggers (api/plugins/schedules.ts, rules.ts, bus-events.ts; runtime/triggers/):
 * schedules, event rules and the events on the bus. The requests' schemas stay in
 * the plugins, which take these fields' descriptions and add their limits.
 */

/** A schedule's overlap policies, as runtime/triggers/schedules/overlap.ts's OVERLAP_POLICIES. */
export const OVERLAP_POLICIES = ["SKIP", "BUFFER_ONE", "ALLOW_ALL", "CANCEL_OTHER"] as const;
/** Why a tick started nothing, as runtime/triggers/schedules/schedule-record.ts's SkippedTick. */
export const SKIPPED_REASONS = ["missed", "overlap", "failed"] as const;
/** Whether a schedule ticks, or a rule matches. */
export const TRIGGER_STATES = ["ENABLED", "DISABLED"] as const;

/** What a schedule starts: a state machine (a version or an alias of it) and the input. */
export const scheduleTarget = {
  type: "object",
  required: ["stateMachine"],
  properties: {
    stateMachine: { type: "string" },
    version: { type: "integer", description: "A version of it to start (not with `alias`)." },
    alias: {
      type: "string",
      description: "An alias of it whose pick starts (not with `version`).",
    },
    input: {
      ...anyJson,
      description:
        "The execution's input; an object gets `scheduledTime` (the tick, ISO 8601) unless it has one.",
    },
  },
} as const;

/** A schedule (`/v1/schedules`): its definition and what its ticks did. */
export const schedule = {
  type: "object",
  required: [
    "name",
    "target",
    "scheduleExpression",
    "scheduleExpressionTimezone",
    "state",
    "overlapPolicy",
    "catchUpWindowSeconds",
    "createdAt",
    "updatedAt",
    "skippedCount",
    "skipped",
  ],
  properties: {
    name: { type: "string" },
    target: scheduleTarget,
    scheduleExpression: {
      type: "string",
      description:
        "EventBridge Scheduler syntax: `at(yyyy-mm-ddThh:mm:ss)`, `rate(value unit)` or `cron(minutes hours day-of-month month day-of-week year)`.",
    },
    scheduleExpressionTimezone: {
      type: "string",
      description: "IANA time zone the expression is read in (default UTC).",
    },
    startDate: {
      type: "string",
      format: "date-time",
      description:
        "No tick before it. In the past, the ticks since then within the catch-up window are due at once.",
    },
    endDate: { type: "string", format: "date-time", description: "No tick at or after it." },
    state: { type: "string", enum: TRIGGER_STATES },
    overlapPolicy: {
      type: "string",
      enum: OVERLAP_POLICIES,
      description: "When the previous tick's execution still runs (default SKIP).",
    },
    catchUpWindowSeconds: {
      type: "integer",
      description: "Ticks missed by at most this long still start (default 300).",
    },
    description: { type: "string" },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
    nextTick: { type: "string", format: "date-time", description: "Absent when disabled or done." },
    lastTick: { type: "string", format: "date-time" },
    lastExecution: { type: "string", description: "The execution the last tick started." },
    bufferedTick: {
      type: "string",
      format: "date-time",
      description: "BUFFER_ONE: the tick kept until the running execution ends.",
    },
    skippedCount: { type: "integer", description: "Ticks that started nothing, ever." },
    skipped: {
      type: "array",
      description: "The latest ticks that started nothing (at most 50), oldest first.",
      items: {
        type: "object",
        required: ["tick", "reason"],
        properties: {
          tick: { type: "string", format: "date-time" },
          reason: {
            type: "string",
            enum: SKIPPED_REASONS,
            description:
              "`missed`: older than the catch-up window; `overlap`: the previous run still ran; `failed`: the start was refused (`error`).",
          },
          error: { type: "string" },
        },
      },
    },
  },
} as const;

/** `POST /v1/schedules/:name/backfill`: the execution of each tick of the range. */
export const scheduleBackfill = {
  type: "object",
  required: ["executions"],
  properties: {
    executions: {
      type: "array",
      items: {
        type: "object",
        required: ["tick", "executionId", "created"],
        properties: {
          tick: { type: "string", format: "date-time" },
          executionId: { type: "string" },
          created: { type: "boolean", description: "False: the tick had started it before." },
        },
      },
    },
  },
} as const;

/** An event rule (`/v1/rules`): an EventBridge pattern and what a matching event starts. */
export const rule = {
  type: "object",
  required: ["name", "eventPattern", "target", "state", "createdAt", "updatedAt"],
  properties: {
    name: { type: "string" },
    eventPattern: {
      type: "object",
      additionalProperties: true,
      description:
        "An EventBridge event pattern (exact values, prefix, suffix, anything-but, numeric, exists, wildcard, equals-ignore-case, cidr, `$or`).",
    },
    target: {
      type: "object",
      required: ["stateMachine"],
      properties: {
        ...scheduleTarget.properties,
        input: { ...anyJson, description: "A constant input (instead of the event)." },
        inputPath: {
          type: "string",
          description: "The part of the event given as input, like `$.detail`.",
        },
        inputTemplate: {
          ...anyJson,
          description: "A JSON value whose strings `<$.path>` are filled from the event.",
        },
      },
    },
    state: { type: "string", enum: TRIGGER_STATES },
    description: { type: "string" },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
  },
} as const;

/** An event on the bus (`GET /v1/events`): EventBridge's envelope, and when it was accepted. */
export const busEvent = {
  type: "object",
  required: ["version", "id", "detail-type", "source", "time", "resources", "detail", "acceptedAt"],
  properties: {
    version: { type: "string" },
    id: { type: "string", description: "The EventId PutEvents answered." },
    "detail-type": { type: "string" },
    source: { type: "string" },
    time: { type: "string", format: "date-time" },
    resources: { type: "array", items: { type: "string" } },
    detail: anyJson,
    acceptedAt: { type: "string", format: "date-time" },
  },
} as const;

/** `POST /v1/events`: each entry's EventId, or its error, in order (EventBridge's PutEvents). */
export const putEventsAnswer = {
  type: "object",
  required: ["FailedEntryCount", "Entries"],
  properties: {
    FailedEntryCount: { type: "integer" },
    Entries: {
      type: "array",
      items: {
        type: "object",
        properties: {
          EventId: { type: "string" },
          ErrorCode: { type: "string" },
          ErrorMessage: { type: "string" },
        },
      },
    },
  },
} as const;

/** One approver's decision on an approval record. */
export const approvalDecision = {
  type: "object",
  required: ["approver", "decision", "comment", "decidedAt"],
  properties: {
    approver: { type: "string" },
    decision: { type: "string", enum: ["APPROVE", "REJECT", "EDIT", "RESPOND"] },
    comment: { type: ["string", "null"] },
    decidedAt: { type: "string", format: "date-time" },
    response: { ...anyJson, description: "The answer to the approval's responseSchema." },
    patch: {
      type: "array",
      items: { type: "object", additionalProperties: true },
      description: "EDIT: the RFC 6902 JSON Patch against the details shown.",
    },
  },
} as const;

/** An approval record (`/v1/approvals`): what is asked, of whom, and how it stands. */
export const approvalRecord = {
  type: "object",
  required: [
    "approvalId",
    "executionId",
    "stateMachine",
    "stateName",
    "enteredEventId",
    "subject",
    "details",
    "approvers",
    "requiredApprovals",
    "policy",
    "createdAt",
    "expiresAt",
    "status",
    "decisions",
    "envelopeHash",
  ],
  properties: {
    approvalId: { type: "string" },
    executionId: { type: "string" },
    stateMachine: { type: "string" },
    stateName: { type: "string" },
    enteredEventId: { type: "integer" },
    subject: { type: "string" },
    details: anyJson,
    approvers: { type: "array", items: { type: "string" } },
    requiredApprovals: { type: "integer" },
    policy: { type: ["string", "null"] },
    createdAt: { type: "string", format: "date-time" },
    expiresAt: { type: ["string", "null"], format: "date-time" },
    status: { type: "string", enum: APPROVAL_STATUSES },
    decisions: { type: "array", items: approvalDecision },
    envelopeHash: {
      type: "string",
      description:
        "Lowercase hex SHA-256 of the RFC 8785 canonical JSON of {executionId, stateName, enteredEventId, subject, details, approvers, requiredApprovals, policy, expiresAt}, plus responseSchemaHash and editable when the approval has them.",
    },
    closedAt: { type: "string", format: "date-time" },
    responseSchema: {
      ...anyJson,
      description:
        "The form (JSON Schema, draft 2020-12) a decision's `response` must match; its hash is in the envelope.",
    },
    responseSchemaHash: {
      type: "string",
      description: "SHA-256 of the responseSchema's canonical JSON (in the envelope when present).",
    },
    editable: {
      type: "array",
      items: { type: "string" },
      description:
        "JSONPaths into details an EDIT decision may patch (in the envelope when present).",
    },
    assignees: {
      type: "array",
      items: { type: "string" },
      description:
        "Users who may decide beside the approvers groups (in the envelope when present).",
    },
    dueAt: {
      type: "string",
      format: "date-time",
      description: "When it is due (DueInSeconds after it was created).",
    },
    reminders: {
      type: "array",
      items: { type: "number" },
      description: "Seconds after creation at which `approval.reminder` is sent while pending.",
    },
    escalation: {
      type: "object",
      required: ["afterSeconds", "to"],
      properties: {
        afterSeconds: { type: "number" },
        to: { type: "array", items: { type: "string" } },
      },
      description: "Seconds after creation at which, still pending, these groups may decide too.",
    },
    claim: {
      type: "object",
      required: ["by", "until"],
      properties: { by: { type: "string" }, until: { type: "string", format: "date-time" } },
      description: "Who claimed it: until then, only they decide.",
    },
    delegatedTo: {
      type: "object",
      required: ["by", "at", "comment"],
      properties: {
        user: { type: "string" },
        group: { type: "string" },
        by: { type: "string" },
        at: { type: "string", format: "date-time" },
        comment: { type: ["string", "null"] },
      },
      description: "Whom it was delegated to: they decide instead of assignees and approvers.",
    },
    escalatedTo: {
      type: "array",
      items: { type: "string" },
      description: "Groups an escalation added to those who may decide.",
    },
    comments: {
      type: "array",
      items: {
        type: "object",
        required: ["by", "at", "text"],
        properties: {
          by: { type: "string" },
          at: { type: "string", format: "date-time" },
          text: { type: "string" },
        },
      },
    },
  },
} as const;

/** `GET /v1/me`: the key presented and what it may do. */
export const me = {
  type: "object",
  required: ["name", "scope", "permissions", "groups", "authenticated"],
  properties: {
    name: { type: ["string", "null"], description: "The key's name; null without keys." },
    scope: { type: "string", enum: SCOPES },
    permissions: { type: "array", items: { type: "string", enum: PERMISSIONS } },
    groups: {
      type: "array",
      items: { type: "string" },
      description: "Approver groups of the key (STEPWISE_APPROVER_GROUPS).",
    },
    authenticated: {
      type: "boolean",
      description: "False when the service has no API keys (loopback only).",
    },
  },
} as const;

/**
 * A bulk operation (`POST /v1/executions/stop|pause|resume|purge`, `GET
 * /v1/operations/:id`): the filter it acts on, as given (with the action's default
 * status), and its progress.
 */
export const operationRecord = {
  type: "object",
  required: [
    "operationId",
    "action",
    "filter",
    "status",
    "matched",
    "done",
    "skipped",
    "failed",
    "errors",
    "createdAt",
  ],
  properties: {
    operationId: { type: "string" },
    action: { type: "string", enum: ["stop", "pause", "resume", "purge"] },
    filter: {
      type: "object",
      description: "Which executions it acts on: the filters of `GET /v1/executions`.",
      properties: {
        stateMachine: { type: "string" },
        status: { type: "string", enum: EXECUTION_STATUSES },
        namePrefix: { type: "string" },
        error: { type: "string" },
        startedAfter: { type: "string", format: "date-time" },
        startedBefore: { type: "string", format: "date-time" },
        endedBefore: { type: "string", format: "date-time" },
      },
    },
    status: { type: "string", enum: ["RUNNING", "SUCCEEDED", "FAILED"] },
    matched: { type: "integer", description: "Executions the filter matched so far." },
    done: { type: "integer", description: "Acted on." },
    skipped: {
      type: "integer",
      description: "Already in the state asked for (a stop of an execution that had ended…).",
    },
    failed: { type: "integer" },
    errors: {
      type: "array",
      description: "The first failures (at most 10).",
      items: {
        type: "object",
        required: ["executionId", "error", "message"],
        properties: {
          executionId: { type: "string" },
          error: { type: "string" },
          message: { type: "string" },
        },
      },
    },
    createdAt: { type: "string", format: "date-time" },
    finishedAt: { type: "string", format: "date-time" },
    createdBy: { type: "string" },
  },
} as const;
