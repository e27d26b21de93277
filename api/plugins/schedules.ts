import type { FastifyPluginAsync } from "fastify";
import { OVERLAP_POLICIES as RUNTIME_OVERLAP_POLICIES } from "../../runtime/triggers/schedules/overlap.js";
import {
  SCHEDULE_NAME_PATTERN,
  type ScheduleInput,
  type SkippedTick,
} from "../../runtime/triggers/schedules/schedule-record.js";
import type { ScheduleView } from "../../runtime/triggers/schedules/schedule-store.js";
import {
  errorResponses,
  nameSchema,
  OVERLAP_POLICIES,
  schedule,
  scheduleBackfill,
  scheduleTarget,
  SKIPPED_REASONS,
} from "../schemas.js";
import type { Schedule } from "../shapes.js";
import type { PluginOptions } from "../server.js";
import { ALIAS_PATTERN, guarded, namedResourceRoutes, triggersOf } from "./named-resources.js";

/**
 * Schedules (runtime/triggers/): a state machine started on EventBridge Scheduler
 * expressions (`at()`, `rate()`, `cron()` with a time zone), with an overlap policy
 * and a catch-up window, and backfills of past ranges. Each tick starts the
 * execution `<schedule>-<yyyymmddThhmmssZ>`, dated at the tick, once whatever the
 * number of workers. The answers' schemas are api/response-schemas.ts's; the
 * requests' add their limits to those fields here.
 */

/** True when A and B are the same type. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
/** response-schemas.ts writes the runtime's lists out (it imports nothing): they must agree. */
export type ScheduleListsMatch = [
  Assert<Same<typeof OVERLAP_POLICIES, typeof RUNTIME_OVERLAP_POLICIES>>,
  Assert<Same<(typeof SKIPPED_REASONS)[number], SkippedTick["reason"]>>,
];

const fields = schedule.properties;

/** What a create (with `name`) and a replace send: the schedule's writable fields, with limits. */
const scheduleBody = {
  type: "object",
  required: ["target", "scheduleExpression"],
  additionalProperties: false,
  properties: {
    target: {
      ...scheduleTarget,
      additionalProperties: false,
      properties: {
        ...scheduleTarget.properties,
        stateMachine: nameSchema,
        version: { ...scheduleTarget.properties.version, minimum: 1 },
        alias: { ...scheduleTarget.properties.alias, pattern: ALIAS_PATTERN },
      },
    },
    scheduleExpression: { ...fields.scheduleExpression, minLength: 1, maxLength: 256 },
    scheduleExpressionTimezone: {
      ...fields.scheduleExpressionTimezone,
      minLength: 1,
      maxLength: 50,
    },
    startDate: fields.startDate,
    endDate: fields.endDate,
    state: fields.state,
    overlapPolicy: fields.overlapPolicy,
    catchUpWindowSeconds: { ...fields.catchUpWindowSeconds, minimum: 0, maximum: 31_536_000 },
    description: { ...fields.description, maxLength: 512 },
  },
} as const;

const scheduleName = { type: "string", pattern: SCHEDULE_NAME_PATTERN } as const;

export const schedulesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  const tags = ["schedules"];
  namedResourceRoutes<ScheduleInput, ScheduleView>(app, runtime, {
    path: "/schedules",
    noun: "schedule",
    tags,
    name: scheduleName,
    body: scheduleBody,
    answer: schedule,
    replaceDescription:
      "Its next tick is computed again from the new expression; what past ticks did is kept.",
    store: (triggers) => triggers.schedules,
  });

  app.post<{ Params: { name: string }; Body: { from: string; to: string } }>(
    "/schedules/:name/backfill",
    {
      config: { permission: "executions:write" },
      schema: {
        summary: "Start the ticks of a past range",
        description:
          "Every tick in [from, to) starts its execution (`<schedule>-<tick>`, dated at the tick; a tick started before is found, not started again), whatever the overlap policy; at most 1,000 ticks.",
        tags,
        params: { type: "object", required: ["name"], properties: { name: scheduleName } },
        body: {
          type: "object",
          required: ["from", "to"],
          additionalProperties: false,
          properties: {
            from: { type: "string", format: "date-time" },
            to: { type: "string", format: "date-time" },
          },
        },
        response: { 200: scheduleBackfill, ...errorResponses },
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

/** What the store answers fits the schema that serializes it (a field it lacks would be dropped). */
export type ScheduleAnswerFits = Assert<ScheduleView extends Schedule ? true : false>;
