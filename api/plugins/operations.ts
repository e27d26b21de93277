import type { FastifyPluginAsync } from "fastify";
import type { ExecutionStatus } from "../../runtime/contract/index.js";
import {
  FILTER_FIELDS,
  type BulkAction,
  type BulkFilter,
  type BulkOptions,
} from "../../runtime/executions/operations/bulk.js";
import type { Permission } from "../auth.js";
import { apiError } from "../errors.js";
import {
  causeSchema,
  errorNameSchema,
  errorResponses,
  EXECUTION_STATUSES,
  nameSchema,
  operationRecord,
} from "../schemas.js";
import type { PluginOptions } from "../server.js";

/**
 * Bulk operations for incident response (runtime/executions/operations/bulk.ts): stop, pause,
 * resume or purge every execution a filter matches, in the background. A start
 * answers 202 with the operation; `GET /v1/operations/:id` shows its progress.
 *
 * The filter is `GET /v1/executions`'s, field for field (state machine or none, name
 * prefix, status, start time range; the error name for purges), so a client acts on
 * exactly what it listed.
 */
const instant = { type: "string", format: "date-time" } as const;

/** The filters of `GET /v1/executions` (api/plugins/executions.ts), as body fields. */
const listFilter = {
  stateMachine: nameSchema,
  namePrefix: {
    type: "string",
    minLength: 1,
    maxLength: 80,
    description: "Only executions whose name starts with this (case-sensitive).",
  },
  startedAfter: { ...instant, description: "Only executions started at or after this instant." },
  startedBefore: { ...instant, description: "Only executions started before this instant." },
} as const;

/**
 * The list's `error` filter, for purges only: in a stop, `error` is the error name
 * the stop records, and an execution that runs (or is paused) has no error to match.
 */
const errorFilter = {
  ...errorNameSchema,
  description: "Only executions that ended with this error name (`States.Timeout`, …).",
} as const;

/**
 * Body fields that narrow the executions acted on. A body with none of them is
 * refused: `{}` acting on every execution of the deployment is more likely a
 * mistake than a wish, and `{"status": "RUNNING"}` says the wish.
 */
const NARROWING = FILTER_FIELDS;

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
    summary: "Stop every execution a filter matches (default: the RUNNING ones)",
    permission: "executions:write",
    required: [],
    extra: { error: errorNameSchema, cause: causeSchema },
    statuses: ["RUNNING", "PAUSED"],
  },
  pause: {
    summary: "Pause every RUNNING execution a filter matches",
    permission: "executions:write",
    required: [],
    extra: { reason: { type: "string", maxLength: 4096 } },
    statuses: ["RUNNING"],
  },
  resume: {
    summary: "Resume every PAUSED execution a filter matches",
    permission: "executions:write",
    required: [],
    extra: {},
    statuses: ["PAUSED"],
  },
  purge: {
    summary: "Purge the executions that ended before an instant (erasure, in bulk)",
    permission: "executions:purge",
    required: ["endedBefore"],
    extra: { endedBefore: instant, error: errorFilter },
    statuses: EXECUTION_STATUSES.filter((s) => s !== "RUNNING" && s !== "PAUSED"),
  },
};

/** The request's filter fields, as the operation stores them. */
function filterOf(action: BulkAction, b: BulkBody): BulkFilter {
  const filter: BulkFilter = {};
  if (b.stateMachine !== undefined) filter.stateMachine = b.stateMachine;
  if (b.status !== undefined) filter.status = b.status as ExecutionStatus;
  if (b.namePrefix !== undefined) filter.namePrefix = b.namePrefix;
  if (action === "purge" && b.error !== undefined) filter.error = b.error;
  if (b.startedAfter !== undefined) filter.startedAfter = b.startedAfter;
  if (b.startedBefore !== undefined) filter.startedBefore = b.startedBefore;
  if (b.endedBefore !== undefined) filter.endedBefore = b.endedBefore;
  return filter;
}

export const operationsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  for (const [action, spec] of Object.entries(bulk) as [BulkAction, (typeof bulk)[BulkAction]][]) {
    app.post<{ Body: BulkBody }>(
      `/executions/${action}`,
      {
        config: { permission: spec.permission },
        schema: {
          summary: spec.summary,
          description:
            "Acts on what `GET /v1/executions` lists with the same filters (at least one must be given). Runs in the background in a worker, a page of executions at a time; safe to repeat (an execution already in the state asked for counts as skipped). Answers 202 with the operation; follow it at GET /v1/operations/{operationId}.",
          tags: ["operations"],
          body: {
            type: "object",
            required: spec.required,
            additionalProperties: false,
            properties: {
              ...listFilter,
              status: { type: "string", enum: spec.statuses },
              ...spec.extra,
            },
          },
          response: { 202: operationRecord, ...errorResponses },
        },
      },
      async (request, reply) => {
        const b = request.body;
        const filter = filterOf(action, b);
        if (!NARROWING.some((field) => filter[field] !== undefined)) {
          const reason = `give at least one filter (${NARROWING.join(", ")}); to act on every RUNNING execution, say "status": "RUNNING"`;
          throw apiError("InvalidRequest", { location: "body", reason }, [
            { location: "body", path: "", message: reason },
          ]);
        }
        const options: BulkOptions = {};
        if (action === "stop" && b.error !== undefined) options.error = b.error;
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
