import type { FastifyPluginAsync } from "fastify";
import type { Json, JsonObject } from "../../engine/core/json.js";
import type { InspectionLevel } from "../../engine/testing/test-state.js";
import { anyJson, errorResponses } from "../schemas.js";
import type { PluginOptions } from "../server.js";
import { runTestState } from "../test-state.js";

/** `POST /v1/state-machines/test-state`: AWS's TestState with JSON values instead of strings. */

interface TestStateBody {
  definition: JsonObject;
  stateName?: string;
  input?: Json;
  inspectionLevel?: InspectionLevel;
  mock?: { result?: Json; error?: string; cause?: string };
}

export const testStatePlugin: FastifyPluginAsync<PluginOptions> = async (
  app,
  { serves, runners },
) => {
  app.post<{ Body: TestStateBody }>(
    "/state-machines/test-state",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary:
          "Run one state once with an input (a Task on its mock, or calling its resource): output, next state, DEBUG data",
        tags: ["state machines"],
        body: {
          type: "object",
          required: ["definition"],
          additionalProperties: false,
          properties: {
            definition: {
              type: "object",
              description: "One state, or a machine (then `stateName`, default StartAt, picks it).",
            },
            stateName: { type: "string", minLength: 1, maxLength: 80 },
            input: anyJson,
            inspectionLevel: { type: "string", enum: ["INFO", "DEBUG", "TRACE"] },
            mock: {
              type: "object",
              additionalProperties: false,
              properties: {
                result: anyJson,
                error: { type: "string", maxLength: 256 },
                cause: { type: "string", maxLength: 32768 },
              },
            },
          },
        },
        response: {
          200: {
            type: "object",
            required: ["status"],
            properties: {
              status: {
                type: "string",
                enum: ["SUCCEEDED", "FAILED", "CAUGHT_ERROR", "RETRIABLE"],
              },
              output: anyJson,
              error: { type: "string" },
              cause: { type: "string" },
              nextState: { type: "string" },
              inspectionData: { type: "object", additionalProperties: true },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { definition, stateName, input, inspectionLevel, mock } = request.body;
      return runTestState(
        {
          definition,
          input: input === undefined ? {} : input,
          ...(stateName !== undefined ? { stateName } : {}),
          ...(inspectionLevel !== undefined ? { inspectionLevel } : {}),
          ...(mock?.result !== undefined
            ? { mock: { result: mock.result } }
            : mock?.error !== undefined
              ? {
                  mock: {
                    error: mock.error,
                    ...(mock.cause !== undefined ? { cause: mock.cause } : {}),
                  },
                }
              : {}),
        },
        serves,
        runners,
      );
    },
  );
};
