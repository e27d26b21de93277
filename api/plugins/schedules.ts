import type { FastifyPluginAsync } from "fastify";
import type { Runtime } from "../../runtime/contract/index.js";
import { TriggerError } from "../../runtime/triggers/errors.js";
import { OVERLAP_POLICIES } from "../../runtime/triggers/schedules/overlap.js";
import {
  SCHEDULE_NAME_PATTERN,
  type ScheduleInput,
} from "../../runtime/triggers/schedules/schedule-record.js";
import type { Triggers } from "../../runtime/triggers/triggers.js";
import { ApiError, apiError } from "../errors.js";
import { anyJson, errorResponses, nameSchema } from "../schemas.js";
import type { PluginOptions } from "../server.js";

/**
 * Schedules (runtime/triggers/): a state machine started on EventBridge Scheduler
 * expressions (`at()`, `rate()`, `cron()` with a time zone), with an overlap policy
 * and a catch-up window, and backfills of past ranges. Each tick starts the
 * execution `<schedule>-<yyyymmddThhmmssZ>`, once whatever the number of workers.
 */

/** The runtime's triggers (the Redis runtime has them); another runtime answers 503. */
export function triggersOf(runtime: Runtime): Triggers {
  const triggers = (runtime as { triggers?: Triggers }).triggers;
  if (!triggers)
    throw apiError("ServiceUnavailable", { reason: "triggers need the Redis runtime" });
  return triggers;
}

/** A trigger store's refusal as the API's error: a 400 names the field by JSON pointer. */
export function triggerApiError(err: unknown, name?: string): unknown {
  if (!(err instanceof TriggerError)) return err;
  if (err.code === "InvalidRequest") {
    const path = err.pointer ?? "";
    return new ApiError(
      "InvalidRequest",
      `Invalid body: ${path ? `${path}: ` : ""}${err.message}`,
      [{ location: "body", path, message: err.message }],
    );
  }
  return apiError(err.code, { name: name ?? "" });
}

const scheduleNameSchema = { type: "string", pattern: SCHEDULE_NAME_PATTERN } as const;
const targetSchema = {
  type: "object",
  required: ["stateMachine"],
  additionalProperties: false,
  properties: {
    stateMachine: nameSchema,
    version: { type: "integer", minimum: 1 },
    alias: { type: "string", pattern: "^(?=.*[A-Za-z_.-])[A-Za-z0-9_.-]{1,80}$" },
    input: {
      ...anyJson,
      description:
        "The execution's input; an object gets `scheduledTime` (the tick, ISO 8601) unless it has one.",
    },
  },
} as const;

const scheduleBody = {
  type: "object",
  required: ["target", "scheduleExpression"],
  additionalProperties: false,
  properties: {
    target: targetSchema,
    scheduleExpression: {
      type: "string",
      minLength: 1,
      maxLength: 256,
      description:
        "EventBridge Scheduler syntax: `at(yyyy-mm-ddThh:mm:ss)`, `rate(value unit)` or `cron(minutes hours day-of-month month day-of-week year)`.",
    },
    scheduleExpressionTimezone: {
      type: "string",
      minLength: 1,
      maxLength: 50,
      description: "IANA time zone the expression is read in (default UTC).",
    },
    startDate: { type: "string", format: "date-time" },
    endDate: { type: "string", format: "date-time" },
    state: { type: "string", enum: ["ENABLED", "DISABLED"] },
    overlapPolicy: {
      type: "string",
      enum: [...OVERLAP_POLICIES],
      description: "When the previous tick's execution still runs (default SKIP).",
    },
    catchUpWindowSeconds: {
      type: "integer",
      minimum: 0,
      maximum: 31_536_000,
      description: "Ticks missed by at most this long still start (default 300).",
    },
    description: { type: "string", maxLength: 512 },
  },
} as const;

const scheduleSchema = {
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
    ...scheduleBody.properties,
    target: { type: "object", additionalProperties: true, properties: targetSchema.properties },
    name: { type: "string" },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
    nextTick: { type: "string", format: "date-time" },
    lastTick: { type: "string", format: "date-time" },
    lastExecution: { type: "string" },
    bufferedTick: { type: "string", format: "date-time" },
    skippedCount: { type: "integer" },
    skipped: {
      type: "array",
      items: {
        type: "object",
        properties: {
          tick: { type: "string" },
          reason: { type: "string", enum: ["missed", "overlap", "failed"] },
          error: { type: "string" },
        },
      },
    },
  },
} as const;

const nameParams = {
  type: "object",
  required: ["name"],
  properties: { name: scheduleNameSchema },
} as const;

export const schedulesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  const tags = ["schedules"];
  const guarded = async <T>(name: string | undefined, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      throw triggerApiError(err, name);
    }
  };

  app.post<{ Body: ScheduleInput & { name: string } }>(
    "/schedules",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Create a schedule",
        tags,
        body: {
          ...scheduleBody,
          required: ["name", ...scheduleBody.required],
          properties: { name: scheduleNameSchema, ...scheduleBody.properties },
        },
        response: { 201: scheduleSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { name, ...input } = request.body;
      const schedule = await guarded(name, () => triggersOf(runtime).schedules.create(name, input));
      return reply.code(201).send(schedule);
    },
  );

  app.get(
    "/schedules",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "List schedules",
        tags,
        response: {
          200: {
            type: "object",
            required: ["items"],
            properties: { items: { type: "array", items: scheduleSchema } },
          },
          ...errorResponses,
        },
      },
    },
    async () => ({ items: await triggersOf(runtime).schedules.list() }),
  );

  app.get<{ Params: { name: string } }>(
    "/schedules/:name",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "Describe a schedule",
        tags,
        params: nameParams,
        response: { 200: scheduleSchema, ...errorResponses },
      },
    },
    async (request) =>
      guarded(request.params.name, () => triggersOf(runtime).schedules.get(request.params.name)),
  );

  app.put<{ Params: { name: string }; Body: ScheduleInput }>(
    "/schedules/:name",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Replace a schedule",
        description:
          "Its next tick is computed again from the new expression; what past ticks did is kept.",
        tags,
        params: nameParams,
        body: scheduleBody,
        response: { 200: scheduleSchema, ...errorResponses },
      },
    },
    async (request) =>
      guarded(request.params.name, () =>
        triggersOf(runtime).schedules.update(request.params.name, request.body),
      ),
  );

  app.delete<{ Params: { name: string } }>(
    "/schedules/:name",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Delete a schedule",
        tags,
        params: nameParams,
        response: { 204: { type: "null" }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await guarded(request.params.name, () =>
        triggersOf(runtime).schedules.delete(request.params.name),
      );
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { name: string }; Body: { from: string; to: string } }>(
    "/schedules/:name/backfill",
    {
      config: { permission: "executions:write" },
      schema: {
        summary: "Start the ticks of a past range",
        description:
          "Every tick in [from, to) starts its execution (`<schedule>-<tick>`; a tick started before is found, not started again), whatever the overlap policy; at most 1,000 ticks.",
        tags,
        params: nameParams,
        body: {
          type: "object",
          required: ["from", "to"],
          additionalProperties: false,
          properties: {
            from: { type: "string", format: "date-time" },
            to: { type: "string", format: "date-time" },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["executions"],
            properties: {
              executions: {
                type: "array",
                items: {
                  type: "object",
                  required: ["tick", "executionId", "created"],
                  properties: {
                    tick: { type: "string" },
                    executionId: { type: "string" },
                    created: { type: "boolean" },
                  },
                },
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { from, to } = request.body;
      const executions = await guarded(request.params.name, () =>
        triggersOf(runtime).schedules.backfill(
          request.params.name,
          Date.parse(from),
          Date.parse(to),
        ),
      );
      return { executions };
    },
  );
};
