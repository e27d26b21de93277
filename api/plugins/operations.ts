import type { FastifyPluginAsync } from "fastify";
import type { ExecutionStatus } from "../../runtime/contract/index.js";
import type {
  BulkAction,
  BulkFilter,
  BulkOptions,
} from "../../runtime/executions/operations/bulk.js";
import type { Permission } from "../auth.js";
import {
  causeSchema,
  errorNameSchema,
  errorResponses,
  EXECUTION_STATUSES,
  nameSchema,
} from "../schemas.js";
import type { PluginOptions } from "../server.js";

/**
 * Bulk operations for incident response (runtime/executions/operations/bulk.ts): stop, pause,
 * resume or purge every execution a filter matches, in the background. A start
 * answers 202 with the operation; `GET /v1/operations/:id` shows its progress.
 */
const operationRecord = {
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
      properties: {
        stateMachine: { type: "string" },
        status: { type: "string" },
        startedBefore: { type: "string" },
        endedBefore: { type: "string" },
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

const instant = { type: "string", format: "date-time" } as const;

interface BulkBody extends BulkFilter, BulkOptions {}

const bulk: Record<
  BulkAction,
  {
    summary: string;
    permission: Permission;
    required: string[];
    extra: object;
    statuses: readonly string[];
  }
> = {
  stop: {
    summary: "Stop every execution of a state machine (default: the RUNNING ones)",
    permission: "executions:write",
    required: ["stateMachine"],
    extra: { startedBefore: instant, error: errorNameSchema, cause: causeSchema },
    statuses: ["RUNNING", "PAUSED"],
  },
  pause: {
    summary: "Pause every RUNNING execution of a state machine",
    permission: "executions:write",
    required: ["stateMachine"],
    extra: { startedBefore: instant, reason: { type: "string", maxLength: 4096 } },
    statuses: ["RUNNING"],
  },
  resume: {
    summary: "Resume every PAUSED execution of a state machine",
    permission: "executions:write",
    required: ["stateMachine"],
    extra: { startedBefore: instant },
    statuses: ["PAUSED"],
  },
  purge: {
    summary: "Purge the executions that ended before an instant (erasure, in bulk)",
    permission: "executions:purge",
    required: ["endedBefore"],
    extra: { endedBefore: instant },
    statuses: EXECUTION_STATUSES.filter((s) => s !== "RUNNING" && s !== "PAUSED"),
  },
};

export const operationsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  for (const [action, spec] of Object.entries(bulk) as [BulkAction, (typeof bulk)[BulkAction]][]) {
    app.post<{ Body: BulkBody }>(
      `/executions/${action}`,
      {
        config: { permission: spec.permission },
        schema: {
          summary: spec.summary,
          description:
            "Runs in the background in a worker, a page of executions at a time; safe to repeat (an execution already in the state asked for counts as skipped). Answers 202 with the operation; follow it at GET /v1/operations/{operationId}.",
          tags: ["operations"],
          body: {
            type: "object",
            required: spec.required,
            additionalProperties: false,
            properties: {
              stateMachine: nameSchema,
              status: { type: "string", enum: spec.statuses },
              ...spec.extra,
            },
          },
          response: { 202: operationRecord, ...errorResponses },
        },
      },
      async (request, reply) => {
        const b = request.body;
        const filter: BulkFilter = {};
        if (b.stateMachine !== undefined) filter.stateMachine = b.stateMachine;
        if (b.status !== undefined) filter.status = b.status as ExecutionStatus;
        if (b.startedBefore !== undefined) filter.startedBefore = b.startedBefore;
        if (b.endedBefore !== undefined) filter.endedBefore = b.endedBefore;
        const options: BulkOptions = {};
        if (b.error !== undefined) options.error = b.error;
        if (b.cause !== undefined) options.cause = b.cause;
        if (b.reason !== undefined) options.reason = b.reason;
        const record = await runtime.startOperation(action, filter, options, request.caller);
        return reply
          .code(202)
          .header("location", `/v1/operations/${record.operationId}`)
          .send(record);
      },
    );
  }

  app.get<{ Params: { operationId: string } }>(
    "/operations/:operationId",
    {
      config: { permission: "executions:read" },
      schema: {
        summary: "A bulk operation's progress",
        tags: ["operations"],
        params: {
          type: "object",
          required: ["operationId"],
          properties: { operationId: { type: "string", pattern: "^op_[0-9a-f]{24}$" } },
        },
        response: { 200: operationRecord, ...errorResponses },
      },
    },
    async (request) => runtime.getOperation(request.params.operationId),
  );
};
