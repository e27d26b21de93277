import type { FastifyPluginAsync } from "fastify";
import type { Json } from "../../engine/core/json.js";
import type { ExecutionStatus } from "../../runtime/contract/index.js";
import { ownTrace, parseTraceparent } from "../../runtime/tracing/trace-context.js";
import type { ModelBudget } from "../../task-runners/model/budget.js";
import { checkPayloadSize } from "../body.js";
import { apiError } from "../errors.js";
import {
  anyJson,
  causeSchema,
  errorNameSchema,
  errorResponses,
  EXECUTION_ID_PATTERN,
  EXECUTION_STATUSES,
  executionNameSchema,
  executionDetail,
  executionRecord,
  executionSummary,
  modelBudget,
  historyEvent,
  nameSchema,
  page,
  pagingQuery,
} from "../schemas.js";
import type { PluginOptions } from "../server.js";
import type * as Shapes from "../shapes.js";
import { bareInput } from "../shape-hints.js";
import { mapRunExecutions } from "./map-run-executions.js";

/**
 * Executions: start (idempotent by name, optionally waiting for the end), describe,
 * list, history, stop. Every write passes the caller (the API key's name) to the
 * runtime, which records it in the history.
 */

const executionIdParams = {
  type: "object",
  required: ["executionId"],
  properties: { executionId: { type: "string", pattern: EXECUTION_ID_PATTERN } },
} as const;

/** What a start answers; with `?wait=` also the status and result so far. */
const startResponse = {
  type: "object",
  required: ["executionId", "startedAt"],
  properties: {
    executionId: { type: "string" },
    startedAt: { type: "string", format: "date-time" },
    status: { type: "string", enum: EXECUTION_STATUSES },
    output: anyJson,
    error: { type: "string" },
    cause: { type: "string" },
    stoppedAt: { type: "string", format: "date-time" },
  },
} as const;

interface StartBody {
  input?: Json;
  name?: string;
  budget?: ModelBudget;
}

export const executionsPlugin: FastifyPluginAsync<PluginOptions> = async (
  app,
  { runtime, maxWaitSeconds, admission },
) => {
  app.post<{
    Params: { name: string };
    Querystring: { wait?: number; version?: number; alias?: string };
    Body: StartBody | undefined;
  }>(
    "/state-machines/:name/executions",
    {
      config: { permission: "executions:write" },
      preValidation: async (request) => {
        const hint = bareInput(request.body);
        if (hint) throw hint;
      },
      schema: {
        summary: "Start an execution (idempotent by name); with ?wait= answer when it ends",
        tags: ["executions"],
        params: { type: "object", required: ["name"], properties: { name: nameSchema } },
        querystring: {
          type: "object",
          properties: {
            wait: {
              type: "number",
              minimum: 0,
              maximum: maxWaitSeconds,
              description: `Seconds (up to ${maxWaitSeconds}) to wait for the execution to end.`,
            },
            version: {
              type: "integer",
              minimum: 1,
              maximum: 2147483647,
              description: "Run this version (default: the latest); recorded as `pinnedVersion`.",
            },
            alias: {
              ...nameSchema,
              description:
                "Run the version this alias picks (by its routing weights); recorded with the pick.",
            },
          },
        },
        body: {
          type: "object",
          additionalProperties: false,
          properties: {
            input: {
              ...anyJson,
              description:
                'The execution input (default {}): any JSON value, taken as it is. Unlike the AWS API\'s string-encoded input, a string here stays a string: send {"input": {"a": 1}}, not {"input": "{\\"a\\":1}"}. At most 256 KiB.',
            },
            name: {
              ...executionNameSchema,
              description:
                'Execution name, as AWS allows it: 1–80 characters except white space, control characters and < > { } [ ] ? * " # % \\ ^ | ~ ` $ & , ; : /. A second start with the same name and input returns the first execution (200).',
            },
            budget: {
              ...modelBudget,
              description:
                "Limits on this execution's model calls (stepwise:model), all its runs together: the next call that would go over fails with Stepwise.BudgetExceeded (catchable) before any request is sent. GET /v1/executions/:id shows `usage`.",
            },
          },
        },
        response: {
          200: { ...startResponse, description: "An execution with this name and input existed." },
          201: { ...startResponse, description: "Started." },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const input: Json = body.input === undefined ? {} : body.input;
      checkPayloadSize(input, "the execution input", "/input");
      const { version, alias } = request.query;
      if (version !== undefined && alias !== undefined) {
        throw apiError(
          "InvalidRequest",
          { location: "query string", reason: "give 'version' or 'alias', not both" },
          [
            {
              location: "querystring",
              path: "/alias",
              message: "give 'version' or 'alias', not both",
            },
          ],
        );
      }
      await admission?.admit(request.caller?.name, request.params.name);
      // W3C Trace Context: the execution joins the caller's trace, else opens its own.
      const given = parseTraceparent(request.headers.traceparent, request.headers.tracestate);
      const started = await runtime.startExecution(request.params.name, {
        input,
        ...(version !== undefined ? { version } : {}),
        ...(alias !== undefined ? { alias } : {}),
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(body.budget !== undefined ? { budget: body.budget } : {}),
        ...(request.caller ? { caller: request.caller } : {}),
        ...(given ? { trace: given } : {}),
      });
      // The request's remaining lines ("request completed", logged by the reply) name
      // what it started (a given traceparent's trace id is on them already, server.ts).
      reply.log = request.log = request.log.child({
        executionId: started.executionId,
        ...(started.created && !given
          ? { traceId: ownTrace(started.executionId, started.startedAt).traceId }
          : {}),
      });
      reply.code(started.created ? 201 : 200);
      const wait = request.query.wait;
      if (wait === undefined)
        return { executionId: started.executionId, startedAt: started.startedAt };
      const record = await runtime.waitForResult(started.executionId, wait * 1000, started);
      return {
        executionId: record.executionId,
        startedAt: record.startedAt,
        status: record.status,
        ...(record.output !== undefined ? { output: record.output } : {}),
        ...(record.error !== undefined ? { error: record.error } : {}),
        ...(record.cause !== undefined ? { cause: record.cause } : {}),
        ...(record.stoppedAt !== undefined ? { stoppedAt: record.stoppedAt } : {}),
      };
    },
  );

  app.get<{
    Querystring: {
      stateMachine?: string;
      status?: ExecutionStatus;
      namePrefix?: string;
      error?: string;
      startedAfter?: string;
      startedBefore?: string;
      cursor?: string;
      limit?: number;
      mapRun?: string;
    };
  }>(
    "/executions",
    {
      config: { permission: "executions:read" },
      schema: {
        summary: "List executions, newest first",
        tags: ["executions"],
        querystring: {
          type: "object",
          properties: {
            stateMachine: nameSchema,
            status: { type: "string", enum: EXECUTION_STATUSES },
            namePrefix: {
              type: "string",
              minLength: 1,
              maxLength: 80,
              description: "Only executions whose name starts with this (case-sensitive).",
            },
            error: {
              ...errorNameSchema,
              description: "Only executions that ended with this error name (`States.Timeout`, …).",
            },
            startedAfter: {
              type: "string",
              format: "date-time",
              description: "Only executions started at or after this instant.",
            },
            startedBefore: {
              type: "string",
              format: "date-time",
              description: "Only executions started before this instant.",
            },
            mapRun: {
              type: "string",
              minLength: 1,
              maxLength: 2000,
              description:
                "A Distributed Map's Map Run (its ARN, or its id: the ARN's last part): its child executions, one per item or batch, oldest first (with `status`, `cursor` and `limit`; the other filters do not apply).",
            },
            ...pagingQuery,
          },
        },
        response: { 200: page(executionSummary), ...errorResponses },
      },
    },
    async (request): Promise<Shapes.Page<Shapes.ExecutionSummary>> => {
      const {
        stateMachine,
        status,
        namePrefix,
        error,
        startedAfter,
        startedBefore,
        cursor,
        limit,
        mapRun,
      } = request.query;
      if (mapRun !== undefined) {
        return mapRunExecutions(runtime, mapRun, {
          ...(status !== undefined ? { status } : {}),
          ...(cursor !== undefined ? { cursor } : {}),
          ...(limit !== undefined ? { limit } : {}),
        });
      }
      return runtime.listExecutions({
        ...(stateMachine !== undefined ? { stateMachine } : {}),
        ...(status !== undefined ? { status } : {}),
        ...(namePrefix !== undefined ? { namePrefix } : {}),
        ...(error !== undefined ? { error } : {}),
        ...(startedAfter !== undefined ? { startedAfter: Date.parse(startedAfter) } : {}),
        ...(startedBefore !== undefined ? { startedBefore: Date.parse(startedBefore) } : {}),
        ...(cursor !== undefined ? { cursor } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
    },
  );

  app.get<{ Params: { executionId: string } }>(
    "/executions/:executionId",
    {
      config: { permission: "executions:read" },
      schema: {
        summary: "Describe an execution",
        tags: ["executions"],
        params: executionIdParams,
        response: { 200: executionDetail, ...errorResponses },
      },
    },
    async (request): Promise<Shapes.ExecutionDetail> => {
      const { executionId } = request.params;
      const record = await runtime.describeExecution(executionId);
      const pending = record.status === "RUNNING" ? await runtime.pendingTasks(executionId) : [];
      // A token answers its task: shown only to callers that may answer tokens.
      const scope = request.caller?.scope;
      const showTokens = scope === undefined || scope === "admin" || scope === "callback";
      const pendingTasks = pending.map((task) => {
        if (showTokens) return task;
        const { taskToken: _, ...rest } = task;
        return rest;
      });
      return { ...record, pendingTasks };
    },
  );

  app.get<{
    Params: { executionId: string };
    Querystring: { cursor?: string; limit?: number; reverse?: boolean };
  }>(
    "/executions/:executionId/history",
    {
      config: { permission: "executions:read" },
      schema: {
        summary: "The execution's history events (ids 1..N), paginated",
        tags: ["executions"],
        params: executionIdParams,
        querystring: {
          type: "object",
          properties: {
            ...pagingQuery,
            reverse: { type: "boolean", default: false, description: "Newest event first." },
          },
        },
        response: { 200: page(historyEvent), ...errorResponses },
      },
    },
    async (request) => {
      const { cursor, limit, reverse } = request.query;
      return runtime.getHistory(request.params.executionId, {
        ...(cursor !== undefined ? { cursor } : {}),
        ...(limit !== undefined ? { limit } : {}),
        ...(reverse !== undefined ? { reverse } : {}),
      });
    },
  );

  app.post<{
    Params: { executionId: string };
    Body: { error?: string; cause?: string } | undefined;
  }>(
    "/executions/:executionId/stop",
    {
      config: { permission: "executions:write" },
      schema: {
        summary: "Stop a running execution (ABORTED)",
        tags: ["executions"],
        params: executionIdParams,
        body: {
          type: "object",
          additionalProperties: false,
          properties: { error: errorNameSchema, cause: causeSchema },
        },
        response: { 200: executionRecord, ...errorResponses },
      },
    },
    async (request): Promise<Shapes.ExecutionRecord> => {
      const body = request.body ?? {};
      return runtime.stopExecution(request.params.executionId, {
        ...(body.error !== undefined ? { error: body.error } : {}),
        ...(body.cause !== undefined ? { cause: body.cause } : {}),
        ...(request.caller ? { caller: request.caller } : {}),
      });
    },
  );

  app.post<{ Params: { executionId: string }; Body: { reason?: string } | undefined }>(
    "/executions/:executionId/pause",
    {
      config: { permission: "executions:write" },
      schema: {
        summary: "Pause a running execution (PAUSED): nothing of it advances until resumed",
        description:
          "Every run of the execution (Map iterations and Parallel branches included) stops where it is. Timers that come due, task results and callbacks are accepted and wait, in order, for the resume. Tasks already running are not cancelled. A paused execution still times out at its TimeoutSeconds and can be stopped. Pausing a paused execution answers its record unchanged.",
        tags: ["executions"],
        params: executionIdParams,
        body: {
          type: "object",
          additionalProperties: false,
          properties: { reason: { type: "string", maxLength: 4096 } },
        },
        response: { 200: executionRecord, ...errorResponses },
      },
    },
    async (request): Promise<Shapes.ExecutionRecord> => {
      const body = request.body ?? {};
      return runtime.pauseExecution(request.params.executionId, {
        ...(body.reason !== undefined ? { reason: body.reason } : {}),
        ...(request.caller ? { caller: request.caller } : {}),
      });
    },
  );

  app.post<{ Params: { executionId: string } }>(
    "/executions/:executionId/resume",
    {
      config: { permission: "executions:write" },
      schema: {
        summary: "Resume a paused execution: what waited is applied in the order it arrived",
        tags: ["executions"],
        params: executionIdParams,
        body: { type: "object", additionalProperties: false, properties: {} },
        response: { 200: executionRecord, ...errorResponses },
      },
    },
    async (request): Promise<Shapes.ExecutionRecord> =>
      runtime.resumeExecution(request.params.executionId, {
        ...(request.caller ? { caller: request.caller } : {}),
      }),
  );

  app.delete<{ Params: { executionId: string } }>(
    "/executions/:executionId",
    {
      config: { permission: "executions:purge" },
      schema: {
        summary: "Purge an ended execution now: record, history, journal, approvals (erasure)",
        description:
          "Removes every key the execution left, its Map and Parallel children and approval records included, and its index entries, ahead of the retention period. Answers 409 ExecutionRunning while it runs or is paused: stop it first.",
        tags: ["executions"],
        params: executionIdParams,
        response: { 204: { type: "null" }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await runtime.purgeExecution(request.params.executionId);
      return reply.code(204).send();
    },
  );

  const restartAnswer = {
    type: "object",
    required: ["executionId", "startedAt", "restartedFrom"],
    properties: {
      executionId: { type: "string" },
      startedAt: { type: "string", format: "date-time" },
      restartedFrom: { type: "string" },
    },
  } as const;

  app.post<{ Params: { executionId: string }; Body: { name?: string } | undefined }>(
    "/executions/:executionId/restart",
    {
      config: { permission: "executions:write" },
      schema: {
        summary: "Start the execution again: same version, same input, a new execution",
        description:
          "The new execution's record and its ExecutionStarted event name the source (`restartedFrom`); the source is not touched, whether it runs or has ended. `name` makes the restart idempotent as a start is.",
        tags: ["executions"],
        params: executionIdParams,
        body: {
          type: "object",
          additionalProperties: false,
          properties: { name: executionNameSchema },
        },
        response: { 201: restartAnswer, 200: restartAnswer, ...errorResponses },
      },
    },
    async (request, reply) => {
      const body = request.body ?? {};
      const started = await runtime.restartExecution(request.params.executionId, {
        ...(body.name !== undefined ? { name: body.name } : {}),
        ...(request.caller ? { caller: request.caller } : {}),
      });
      return reply.code(started.created ? 201 : 200).send({
        executionId: started.executionId,
        startedAt: started.startedAt,
        restartedFrom: request.params.executionId,
      });
    },
  );

  const forkAnswer = {
    type: "object",
    required: ["executionId", "startedAt", "forkedFrom"],
    properties: {
      executionId: { type: "string" },
      startedAt: { type: "string", format: "date-time" },
      forkedFrom: {
        type: "object",
        required: ["executionId", "eventId"],
        properties: { executionId: { type: "string" }, eventId: { type: "integer" } },
      },
    },
  } as const;

  app.post<{
    Params: { executionId: string };
    Body: { fromEventId: number; name?: string; input?: Json };
  }>(
    "/executions/:executionId/fork",
    {
      config: { permission: "executions:write" },
      schema: {
        summary: "Fork: a new execution that takes up this one where it entered a state",
        description:
          "The source's journal is replayed up to the state entered at history event `fromEventId` (a `…StateEntered` event of the top level, a Map iteration or a Parallel branch); the new execution starts there with every run as it was (the whole execution is forked), on the source's version, with the same variables: the run that entered that state enters it again with its input or with `input`; the others go on (tasks scheduled again, timers armed for the same instant, children not started yet started, outputs of ended ones kept). Its history starts with ExecutionForked. The source is not touched.",
        tags: ["executions"],
        params: executionIdParams,
        body: {
          type: "object",
          required: ["fromEventId"],
          additionalProperties: false,
          properties: {
            fromEventId: { type: "integer", minimum: 1 },
            name: executionNameSchema,
            input: anyJson,
          },
        },
        response: { 201: forkAnswer, 200: forkAnswer, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { fromEventId, name, input } = request.body;
      if (input !== undefined) checkPayloadSize(input, "the state input", "/input");
      const started = await runtime.forkExecution(request.params.executionId, {
        fromEventId,
        ...(name !== undefined ? { name } : {}),
        ...(input !== undefined ? { input } : {}),
        ...(request.caller ? { caller: request.caller } : {}),
      });
      return reply.code(started.created ? 201 : 200).send({
        executionId: started.executionId,
        startedAt: started.startedAt,
        forkedFrom: { executionId: request.params.executionId, eventId: fromEventId },
      });
    },
  );

  app.post<{ Params: { executionId: string }; Body: { clientToken?: string } | undefined }>(
    "/executions/:executionId/redrive",
    {
      config: { permission: "executions:write" },
      schema: {
        summary:
          "Redrive: run a FAILED, TIMED_OUT or ABORTED execution again from the state it ended in",
        description:
          "AWS's RedriveExecution: within 14 days of its end, the execution runs again in place from the state its top level ended in, with that state's input, its variables and everything before kept; the history goes on with ExecutionRedriven and `redriveCount` counts up. A repeat with the same `clientToken` answers without redriving again. In a Map or Parallel state only the iterations and branches that did not succeed run again, each from the state it ended in (nested Maps and Parallels alike), or from its start if it was stopped before it started; the others keep their outputs.",
        tags: ["executions"],
        params: executionIdParams,
        body: {
          type: "object",
          additionalProperties: false,
          properties: { clientToken: { type: "string", minLength: 1, maxLength: 64 } },
        },
        response: { 200: executionRecord, ...errorResponses },
      },
    },
    async (request): Promise<Shapes.ExecutionRecord> => {
      const body = request.body ?? {};
      return runtime.redriveExecution(request.params.executionId, {
        ...(body.clientToken !== undefined ? { clientToken: body.clientToken } : {}),
        ...(request.caller ? { caller: request.caller } : {}),
      });
    },
  );
};
