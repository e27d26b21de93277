import type { FastifyPluginAsync } from "fastify";
import type { Json } from "../../engine/core/json.js";
import { checkPayloadSize } from "../body.js";
import {
  anyJson,
  causeSchema,
  errorNameSchema,
  errorResponses,
  TASK_TOKEN_PATTERN,
} from "../schemas.js";
import type { PluginOptions } from "../server.js";

/**
 * Task-token callbacks (AWS SendTaskSuccess / SendTaskFailure / SendTaskHeartbeat).
 * These are what an approval UI calls, so the `callback` scope suffices. A token
 * is answered once: the runtime refuses a second answer (TaskDoesNotExist, 404) or a
 * late one (TaskTimedOut, 409), and never touches the execution then.
 */

const tokenParams = {
  type: "object",
  required: ["token"],
  properties: { token: { type: "string", pattern: TASK_TOKEN_PATTERN } },
} as const;

const accepted = {
  type: "object",
  description: "Accepted; the execution continues.",
  properties: {},
} as const;

export const taskTokensPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  app.post<{ Params: { token: string }; Body: { output: Json } }>(
    "/task-tokens/:token/success",
    {
      config: { permission: "callback" },
      schema: {
        summary: "Complete the task waiting on this token with an output",
        tags: ["task tokens"],
        params: tokenParams,
        body: {
          type: "object",
          required: ["output"],
          additionalProperties: false,
          properties: { output: { ...anyJson, description: "The task result; at most 256 KiB." } },
        },
        response: { 200: accepted, ...errorResponses },
      },
    },
    async (request) => {
      checkPayloadSize(request.body.output, "the task output", "/output");
      await runtime.sendTaskSuccess(request.params.token, request.body.output, request.caller);
      return {};
    },
  );

  app.post<{ Params: { token: string }; Body: { error?: string; cause?: string } | undefined }>(
    "/task-tokens/:token/failure",
    {
      config: { permission: "callback" },
      schema: {
        summary: "Fail the task waiting on this token (Retry and Catch apply)",
        tags: ["task tokens"],
        params: tokenParams,
        body: {
          type: "object",
          additionalProperties: false,
          properties: { error: errorNameSchema, cause: causeSchema },
        },
        response: { 200: accepted, ...errorResponses },
      },
    },
    async (request) => {
      const body = request.body ?? {};
      await runtime.sendTaskFailure(request.params.token, body.error, body.cause, request.caller);
      return {};
    },
  );

  app.post<{ Params: { token: string } }>(
    "/task-tokens/:token/heartbeat",
    {
      config: { permission: "callback" },
      schema: {
        summary: "Reset the task's HeartbeatSeconds timer",
        tags: ["task tokens"],
        params: tokenParams,
        response: { 200: accepted, ...errorResponses },
      },
    },
    async (request) => {
      await runtime.sendTaskHeartbeat(request.params.token, request.caller);
      return {};
    },
  );
};
