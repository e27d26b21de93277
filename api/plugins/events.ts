import type { FastifyPluginAsync } from "fastify";
import { mayDecide } from "../../runtime/approvals/approval-record.js";
import { approverOf } from "./approvals.js";
import { apiError } from "../errors.js";
import { errorResponses, EXECUTION_ID_PATTERN } from "../schemas.js";
import type { PluginOptions } from "../server.js";
import { EventStreams, lastEventId, type SseMessage } from "../sse.js";

/**
 * Live streams (Server-Sent Events), for the console and for anyone:
 *
 * - `GET /v1/executions/:id/events`: the history as it is committed, one `history`
 *   message per event (`id:` = the event id), then `end` with the final status;
 * - `GET /v1/approvals/events`: one `approval` message per change of any approval
 *   (`{event, approval}`), the record as it is when sent.
 *
 * Both resume after `Last-Event-ID` (or `?after=`) and answer 401/403/404 like the
 * routes they mirror before the stream starts. Browsers' EventSource cannot send an
 * Authorization header, so the console reads them with fetch().
 */

/**
 * An approval feed id: a Redis stream id, or with several shards one per shard
 * joined by `_` (runtime/shards/shard-rooms.ts), at most 1,024 of them.
 */
const STREAM_ID_PATTERN = "^\\d{1,20}-\\d{1,20}(_\\d{1,20}-\\d{1,20}){0,1023}$";

const eventStream = (description: string) => ({
  200: {
    description,
    content: { "text/event-stream": { schema: { type: "string" } } },
  },
});

export const eventsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  const streams = new EventStreams();
  app.addHook("preClose", async () => streams.closeAll());

  app.get<{ Params: { executionId: string }; Querystring: { after?: number } }>(
    "/executions/:executionId/events",
    {
      config: { permission: "executions:read" },
      schema: {
        summary: "The execution's history as it is committed (Server-Sent Events)",
        description:
          "One `history` message per event (`id:` is the event id, `data:` the event), then `end` with `{status}` once the execution has ended; the server then closes the stream. Resume with `Last-Event-ID: N` (or `?after=N`): events with ids above N.",
        tags: ["executions"],
        params: {
          type: "object",
          required: ["executionId"],
          properties: { executionId: { type: "string", pattern: EXECUTION_ID_PATTERN } },
        },
        querystring: {
          type: "object",
          properties: {
            after: { type: "integer", minimum: 0, description: "Send events with ids above this." },
          },
        },
        response: { ...eventStream("history and end messages"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const { executionId } = request.params;
      const resume = lastEventId(request, request.query.after?.toString());
      if (resume !== undefined && !/^\d{1,10}$/.test(resume)) {
        throw apiError("InvalidRequest", {
          location: "header 'Last-Event-ID'",
          reason: "it must be a history event id (a non-negative integer)",
        });
      }
      // Unknown executions answer 404 before the stream starts (one event read).
      await runtime.getHistory(executionId, { limit: 1 });
      await streams.send(request, reply, async function* (signal): AsyncGenerator<SseMessage> {
        for await (const item of runtime.followHistory(executionId, Number(resume ?? 0), signal)) {
          if (item.kind === "events") {
            for (const event of item.events) {
              yield { id: String(event.id), event: "history", data: event };
            }
          } else {
            yield { event: "end", data: { status: item.status } };
          }
        }
      });
    },
  );

  app.get<{ Querystring: { after?: string } }>(
    "/approvals/events",
    {
      config: { permission: "approvals:read" },
      schema: {
        summary: "Approval changes as they are committed (Server-Sent Events)",
        description:
          "One `approval` message per change (`data:` `{event, approval}`, where `event` is `approval.created`, `approval.decided`, `approval.approved`, `approval.rejected`, `approval.expired` or `approval.cancelled` and `approval` the record when sent). Resume with `Last-Event-ID` (or `?after=`); the last 10,000 changes can be resumed.",
        tags: ["approvals"],
        querystring: {
          type: "object",
          properties: {
            after: {
              type: "string",
              pattern: STREAM_ID_PATTERN,
              description: "Send the changes after this message id.",
            },
          },
        },
        response: { ...eventStream("approval messages"), ...errorResponses },
      },
    },
    async (request, reply) => {
      const resume = lastEventId(request, request.query.after);
      if (resume !== undefined && !new RegExp(STREAM_ID_PATTERN).test(resume)) {
        throw apiError("InvalidRequest", {
          location: "header 'Last-Event-ID'",
          reason: "it must be an id this stream sent (<ms>-<seq>)",
        });
      }
      const who = approverOf(request);
      await streams.send(request, reply, async function* (signal): AsyncGenerator<SseMessage> {
        for await (const change of runtime.followApprovals(resume, signal)) {
          // Only the approvals this caller may decide (an approve key of another group sees none of them).
          if (!mayDecide(change.approval, who)) continue;
          yield {
            id: change.id,
            event: "approval",
            data: { event: change.event, approval: change.approval },
          };
        }
      });
    },
  );
};
