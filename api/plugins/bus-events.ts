import type { FastifyPluginAsync } from "fastify";
import { MAX_ENTRIES, type PutEventsEntry } from "../../runtime/triggers/events/event-bus.js";
import { apiError } from "../errors.js";
import { busEvent, errorResponses, page, putEventsAnswer } from "../schemas.js";
import type { PluginOptions } from "../server.js";
import { guarded, triggersOf } from "./named-resources.js";

/**
 * The event bus (runtime/triggers/events/event-bus.ts): `POST /v1/events` takes events in
 * EventBridge's PutEvents shape and answers each entry's EventId or error; the
 * events matching a rule start its target, and parked `waitForEvent` tasks take
 * them. `GET /v1/events` lists the events kept (retention:
 * `STEPWISE_EVENT_RETENTION_HOURS`). (Not api/plugins/events.ts, which serves the
 * Server-Sent Event streams.)
 */

const entrySchema = {
  type: "object",
  required: ["Source", "DetailType", "Detail"],
  additionalProperties: false,
  properties: {
    Source: { type: "string", minLength: 1, maxLength: 256 },
    DetailType: { type: "string", minLength: 1, maxLength: 256 },
    Detail: { type: "string", description: "A JSON object, as text." },
    Time: { type: "string", format: "date-time" },
    Resources: { type: "array", maxItems: 100, items: { type: "string", maxLength: 2048 } },
    Id: {
      type: "string",
      minLength: 1,
      maxLength: 256,
      description:
        "Stepwise: an entry with an Id accepted before (within retention) is answered with its first EventId and changes nothing.",
    },
  },
} as const;

export const busEventsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  const tags = ["events"];

  app.post<{ Body: { Entries: PutEventsEntry[] } }>(
    "/events",
    {
      config: { permission: "executions:write" },
      schema: {
        summary: "Put events on the bus (EventBridge PutEvents)",
        description: `Up to ${MAX_ENTRIES} entries of at most 256 KiB each. Each is answered in order with its EventId, or ErrorCode and ErrorMessage.`,
        tags,
        body: {
          type: "object",
          required: ["Entries"],
          additionalProperties: false,
          properties: {
            Entries: { type: "array", minItems: 1, maxItems: MAX_ENTRIES, items: entrySchema },
          },
        },
        response: { 200: putEventsAnswer, ...errorResponses },
      },
    },
    async (request) => {
      const entries = await guarded(undefined, () =>
        triggersOf(runtime).publish(request.body.Entries),
      );
      return { FailedEntryCount: entries.filter((e) => "ErrorCode" in e).length, Entries: entries };
    },
  );

  app.get<{ Querystring: { cursor?: string; limit?: number } }>(
    "/events",
    {
      config: { permission: "executions:read" },
      schema: {
        summary: "List the events on the bus, newest first",
        tags,
        querystring: {
          type: "object",
          properties: {
            cursor: { type: "string", pattern: "^\\d{1,16}$" },
            limit: { type: "integer", minimum: 1, maximum: 1000, default: 100 },
          },
        },
        response: { 200: page(busEvent), ...errorResponses },
      },
    },
    async (request) => {
      const { cursor, limit } = request.query;
      if (cursor !== undefined && !Number.isSafeInteger(Number(cursor)))
        throw apiError("InvalidCursor", { cursor });
      return triggersOf(runtime).bus.list({
        ...(limit !== undefined ? { limit } : {}),
        ...(cursor !== undefined ? { before: Number(cursor) } : {}),
      });
    },
  );
};
