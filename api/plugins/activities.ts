import type { FastifyPluginAsync } from "fastify";
import { anyJson, errorResponses, nameSchema } from "../schemas.js";
import type { PluginOptions } from "../server.js";

/**
 * Activity workers long-poll for tasks (AWS GetActivityTask): the answer is a task
 * token and input, or 204 when none arrived within `wait` seconds. The worker then
 * answers through the task-token routes.
 */

/** AWS holds a GetActivityTask poll for up to 60 seconds. */
const MAX_POLL_SECONDS = 60;

export const activitiesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  app.get<{ Params: { name: string }; Querystring: { wait: number; workerName?: string } }>(
    "/activities/:name/task",
    {
      config: { permission: "callback" },
      schema: {
        summary: "Long-poll for the next task of an activity",
        tags: ["activities"],
        params: { type: "object", required: ["name"], properties: { name: nameSchema } },
        querystring: {
          type: "object",
          properties: {
            wait: {
              type: "number",
              minimum: 0,
              maximum: MAX_POLL_SECONDS,
              default: 20,
              description: `Seconds to wait for a task (0–${MAX_POLL_SECONDS}, default 20).`,
            },
            workerName: {
              ...nameSchema,
              description:
                "Recorded in the ActivityStarted history event (default: the API key's name).",
            },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["taskToken", "input"],
            properties: {
              taskToken: { type: "string" },
              input: anyJson,
              operationKey: {
                type: "string",
                description:
                  "The same for every Retry attempt of one entry into the state: use it to make the work happen once.",
              },
            },
          },
          204: { type: "null", description: "No task arrived within `wait` seconds." },
          ...errorResponses,
        },
      },
    },
    async (request, reply) => {
      const { wait, workerName } = request.query;
      const task = await runtime.getActivityTask(
        request.params.name,
        wait,
        workerName ?? request.caller?.name,
      );
      if (!task) return reply.code(204).send();
      return task;
    },
  );
};
