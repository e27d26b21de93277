import type { FastifyPluginAsync } from "fastify";
import { RULE_NAME_PATTERN, type RuleInput } from "../../runtime/triggers/events/rule-record.js";
import { anyJson, errorResponses, nameSchema } from "../schemas.js";
import type { PluginOptions } from "../server.js";
import { triggerApiError, triggersOf } from "./schedules.js";

/**
 * Event rules (runtime/triggers/): an EventBridge event pattern and the state
 * machine a matching event on the bus (`POST /v1/events`) starts, once per event:
 * the execution is named `<rule>-<event id>`.
 */

const ruleNameSchema = { type: "string", pattern: RULE_NAME_PATTERN } as const;

const ruleBody = {
  type: "object",
  required: ["eventPattern", "target"],
  additionalProperties: false,
  properties: {
    eventPattern: {
      type: "object",
      description:
        "An EventBridge event pattern (exact values, prefix, suffix, anything-but, numeric, exists, wildcard, equals-ignore-case, cidr, `$or`).",
    },
    target: {
      type: "object",
      required: ["stateMachine"],
      additionalProperties: false,
      properties: {
        stateMachine: nameSchema,
        version: { type: "integer", minimum: 1 },
        alias: { type: "string", pattern: "^(?=.*[A-Za-z_.-])[A-Za-z0-9_.-]{1,80}$" },
        input: { ...anyJson, description: "A constant input (instead of the event)." },
        inputPath: {
          type: "string",
          maxLength: 256,
          description: "The part of the event given as input, like `$.detail`.",
        },
        inputTemplate: {
          ...anyJson,
          description: "A JSON value whose strings `<$.path>` are filled from the event.",
        },
      },
    },
    state: { type: "string", enum: ["ENABLED", "DISABLED"] },
    description: { type: "string", maxLength: 512 },
  },
} as const;

const ruleSchema = {
  type: "object",
  required: ["name", "eventPattern", "target", "state", "createdAt", "updatedAt"],
  properties: {
    name: { type: "string" },
    eventPattern: { type: "object", additionalProperties: true },
    target: {
      type: "object",
      additionalProperties: true,
      properties: ruleBody.properties.target.properties,
    },
    state: { type: "string" },
    description: { type: "string" },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
  },
} as const;

const nameParams = {
  type: "object",
  required: ["name"],
  properties: { name: ruleNameSchema },
} as const;

export const rulesPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  const tags = ["events"];
  const guarded = async <T>(name: string, work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      throw triggerApiError(err, name);
    }
  };

  app.post<{ Body: RuleInput & { name: string } }>(
    "/rules",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Create an event rule",
        tags,
        body: {
          ...ruleBody,
          required: ["name", ...ruleBody.required],
          properties: { name: ruleNameSchema, ...ruleBody.properties },
        },
        response: { 201: ruleSchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { name, ...input } = request.body;
      return reply
        .code(201)
        .send(await guarded(name, () => triggersOf(runtime).rules.create(name, input)));
    },
  );

  app.get(
    "/rules",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "List event rules",
        tags,
        response: {
          200: {
            type: "object",
            required: ["items"],
            properties: { items: { type: "array", items: ruleSchema } },
          },
          ...errorResponses,
        },
      },
    },
    async () => ({ items: await triggersOf(runtime).rules.list() }),
  );

  app.get<{ Params: { name: string } }>(
    "/rules/:name",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "Describe an event rule",
        tags,
        params: nameParams,
        response: { 200: ruleSchema, ...errorResponses },
      },
    },
    async (request) =>
      guarded(request.params.name, () => triggersOf(runtime).rules.get(request.params.name)),
  );

  app.put<{ Params: { name: string }; Body: RuleInput }>(
    "/rules/:name",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Replace an event rule",
        tags,
        params: nameParams,
        body: ruleBody,
        response: { 200: ruleSchema, ...errorResponses },
      },
    },
    async (request) =>
      guarded(request.params.name, () =>
        triggersOf(runtime).rules.update(request.params.name, request.body),
      ),
  );

  app.delete<{ Params: { name: string } }>(
    "/rules/:name",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Delete an event rule",
        tags,
        params: nameParams,
        response: { 204: { type: "null" }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await guarded(request.params.name, () =>
        triggersOf(runtime).rules.delete(request.params.name),
      );
      return reply.code(204).send();
    },
  );
};
