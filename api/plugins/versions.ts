import type { FastifyPluginAsync } from "fastify";
import type { AliasRoute, TaggedResource } from "../../runtime/contract/index.js";
import { errorResponses, nameSchema, page, pagingQuery } from "../schemas.js";
import type { PluginOptions } from "../server.js";

/**
 * What the AWS API added, on the same runtime methods: deleting a state machine,
 * published versions, aliases (weighted routing to one or two versions), activities
 * and tags. A start names a version or alias with `?version=` / `?alias=`
 * (executions plugin).
 */

const ALIAS_PATTERN = "^(?=.*[A-Za-z_.-])[A-Za-z0-9_.-]{1,80}$";
const aliasSchema = { type: "string", pattern: ALIAS_PATTERN } as const;
const machineParams = {
  type: "object",
  required: ["name"],
  properties: { name: nameSchema },
} as const;
const aliasParams = {
  type: "object",
  required: ["name", "alias"],
  properties: { name: nameSchema, alias: aliasSchema },
} as const;
const versionNumber = { type: "integer", minimum: 1, maximum: 2147483647 } as const;
const description = { type: "string", maxLength: 256 } as const;

const publishedVersion = {
  type: "object",
  required: ["name", "version", "publishedAt"],
  properties: {
    name: { type: "string" },
    version: { type: "integer" },
    description: { type: "string" },
    publishedAt: { type: "string", format: "date-time" },
  },
} as const;

const routingSchema = {
  type: "array",
  minItems: 1,
  maxItems: 2,
  items: {
    type: "object",
    required: ["version", "weight"],
    additionalProperties: false,
    properties: { version: versionNumber, weight: { type: "integer", minimum: 0, maximum: 100 } },
  },
  description: "One or two published versions; weights add up to 100.",
} as const;

const aliasSchemaOut = {
  type: "object",
  required: ["name", "stateMachine", "routing", "createdAt", "updatedAt"],
  properties: {
    name: { type: "string" },
    stateMachine: { type: "string" },
    description: { type: "string" },
    routing: {
      type: "array",
      items: {
        type: "object",
        properties: { version: { type: "integer" }, weight: { type: "integer" } },
      },
    },
    createdAt: { type: "string", format: "date-time" },
    updatedAt: { type: "string", format: "date-time" },
  },
} as const;

const activitySchema = {
  type: "object",
  required: ["name", "createdAt"],
  properties: { name: { type: "string" }, createdAt: { type: "string", format: "date-time" } },
} as const;

const tagsSchema = {
  type: "object",
  maxProperties: 50,
  propertyNames: { minLength: 1, maxLength: 128 },
  additionalProperties: { type: "string", maxLength: 256 },
} as const;

function paging(query: { cursor?: string; limit?: number }) {
  return {
    ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
    ...(query.limit !== undefined ? { limit: query.limit } : {}),
  };
}

export const versionsPlugin: FastifyPluginAsync<PluginOptions> = async (app, { runtime }) => {
  app.delete<{ Params: { name: string } }>(
    "/state-machines/:name",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary:
          "Delete a state machine with its published versions, aliases and tags (running executions go on)",
        tags: ["state machines"],
        params: machineParams,
        response: { 204: { type: "null" }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await runtime.deleteStateMachine(request.params.name);
      return reply.code(204).send();
    },
  );

  app.post<{
    Params: { name: string };
    Body: { description?: string; expectedVersion?: number } | undefined;
  }>(
    "/state-machines/:name/versions",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Publish the latest version (startable by number, routable by aliases)",
        tags: ["state machines"],
        params: machineParams,
        body: {
          type: "object",
          additionalProperties: false,
          properties: {
            description,
            expectedVersion: {
              ...versionNumber,
              description: "Publish only if this is still the latest version (409 otherwise).",
            },
          },
        },
        response: { 200: publishedVersion, 201: publishedVersion, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { description: text, expectedVersion } = request.body ?? {};
      const { created, ...published } = await runtime.publishStateMachineVersion(
        request.params.name,
        {
          ...(text !== undefined ? { description: text } : {}),
          ...(expectedVersion !== undefined ? { expectedVersion } : {}),
        },
      );
      return reply.code(created ? 201 : 200).send(published);
    },
  );

  app.get<{ Params: { name: string }; Querystring: { cursor?: string; limit?: number } }>(
    "/state-machines/:name/versions",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "Published versions, newest first",
        tags: ["state machines"],
        params: machineParams,
        querystring: { type: "object", properties: pagingQuery },
        response: { 200: page(publishedVersion), ...errorResponses },
      },
    },
    async (request) => runtime.listStateMachineVersions(request.params.name, paging(request.query)),
  );

  app.delete<{ Params: { name: string; version: number } }>(
    "/state-machines/:name/versions/:version",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Unpublish a version (409 while an alias routes to it)",
        tags: ["state machines"],
        params: {
          type: "object",
          required: ["name", "version"],
          properties: { name: nameSchema, version: versionNumber },
        },
        response: { 204: { type: "null" }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await runtime.deleteStateMachineVersion(request.params.name, request.params.version);
      return reply.code(204).send();
    },
  );

  app.post<{
    Params: { name: string };
    Body: { name: string; description?: string; routing: AliasRoute[] };
  }>(
    "/state-machines/:name/aliases",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Create an alias routing starts to one or two published versions by weight",
        tags: ["state machines"],
        params: machineParams,
        body: {
          type: "object",
          required: ["name", "routing"],
          additionalProperties: false,
          properties: { name: aliasSchema, description, routing: routingSchema },
        },
        response: { 200: aliasSchemaOut, 201: aliasSchemaOut, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { name, description: text, routing } = request.body;
      const { created, ...alias } = await runtime.createStateMachineAlias(
        request.params.name,
        name,
        { routing, ...(text !== undefined ? { description: text } : {}) },
      );
      return reply.code(created ? 201 : 200).send(alias);
    },
  );

  app.get<{ Params: { name: string }; Querystring: { cursor?: string; limit?: number } }>(
    "/state-machines/:name/aliases",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "Aliases of a state machine, by name",
        tags: ["state machines"],
        params: machineParams,
        querystring: { type: "object", properties: pagingQuery },
        response: { 200: page(aliasSchemaOut), ...errorResponses },
      },
    },
    async (request) => runtime.listStateMachineAliases(request.params.name, paging(request.query)),
  );

  app.get<{ Params: { name: string; alias: string } }>(
    "/state-machines/:name/aliases/:alias",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "One alias",
        tags: ["state machines"],
        params: aliasParams,
        response: { 200: aliasSchemaOut, ...errorResponses },
      },
    },
    async (request) => runtime.getStateMachineAlias(request.params.name, request.params.alias),
  );

  app.patch<{
    Params: { name: string; alias: string };
    Body: { description?: string; routing?: AliasRoute[] };
  }>(
    "/state-machines/:name/aliases/:alias",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Change an alias's routing or description",
        tags: ["state machines"],
        params: aliasParams,
        body: {
          type: "object",
          additionalProperties: false,
          minProperties: 1,
          properties: { description, routing: routingSchema },
        },
        response: { 200: aliasSchemaOut, ...errorResponses },
      },
    },
    async (request) => {
      const { description: text, routing } = request.body;
      return runtime.updateStateMachineAlias(request.params.name, request.params.alias, {
        ...(text !== undefined ? { description: text } : {}),
        ...(routing !== undefined ? { routing } : {}),
      });
    },
  );

  app.delete<{ Params: { name: string; alias: string } }>(
    "/state-machines/:name/aliases/:alias",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Delete an alias",
        tags: ["state machines"],
        params: aliasParams,
        response: { 204: { type: "null" }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await runtime.deleteStateMachineAlias(request.params.name, request.params.alias);
      return reply.code(204).send();
    },
  );

  app.post<{ Body: { name: string } }>(
    "/activities",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Create an activity (idempotent by name)",
        tags: ["activities"],
        body: {
          type: "object",
          required: ["name"],
          additionalProperties: false,
          properties: { name: nameSchema },
        },
        response: { 200: activitySchema, 201: activitySchema, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { created, ...activity } = await runtime.createActivity(request.body.name);
      return reply.code(created ? 201 : 200).send(activity);
    },
  );

  app.get<{ Querystring: { cursor?: string; limit?: number } }>(
    "/activities",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "Activities, by name",
        tags: ["activities"],
        querystring: { type: "object", properties: pagingQuery },
        response: { 200: page(activitySchema), ...errorResponses },
      },
    },
    async (request) => runtime.listActivities(paging(request.query)),
  );

  app.get<{ Params: { name: string } }>(
    "/activities/:name",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "One activity",
        tags: ["activities"],
        params: machineParams,
        response: { 200: activitySchema, ...errorResponses },
      },
    },
    async (request) => runtime.describeActivity(request.params.name),
  );

  app.delete<{ Params: { name: string } }>(
    "/activities/:name",
    {
      config: { permission: "definitions:write" },
      schema: {
        summary: "Delete an activity",
        tags: ["activities"],
        params: machineParams,
        response: { 204: { type: "null" }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await runtime.deleteActivity(request.params.name);
      return reply.code(204).send();
    },
  );

  for (const [kind, prefix] of [
    ["stateMachine", "/state-machines"],
    ["activity", "/activities"],
  ] as const) {
    const resource = (name: string): TaggedResource => ({ kind, name });
    app.get<{ Params: { name: string } }>(
      `${prefix}/:name/tags`,
      {
        config: { permission: "definitions:read" },
        schema: {
          summary: `Tags of ${kind === "activity" ? "an activity" : "a state machine"}`,
          tags: ["tags"],
          params: machineParams,
          response: { 200: tagsSchema, ...errorResponses },
        },
      },
      async (request) => runtime.listTags(resource(request.params.name)),
    );
    app.patch<{ Params: { name: string }; Body: Record<string, string> }>(
      `${prefix}/:name/tags`,
      {
        config: { permission: "definitions:write" },
        schema: {
          summary: "Add or overwrite tags (`{key: value}`); at most 50 per resource",
          tags: ["tags"],
          params: machineParams,
          body: tagsSchema,
          response: { 200: tagsSchema, ...errorResponses },
        },
      },
      async (request) => {
        await runtime.tagResource(resource(request.params.name), request.body);
        return runtime.listTags(resource(request.params.name));
      },
    );
    app.delete<{ Params: { name: string; key: string } }>(
      `${prefix}/:name/tags/:key`,
      {
        config: { permission: "definitions:write" },
        schema: {
          summary: "Remove a tag",
          tags: ["tags"],
          params: {
            type: "object",
            required: ["name", "key"],
            properties: { name: nameSchema, key: { type: "string", minLength: 1, maxLength: 128 } },
          },
          response: { 204: { type: "null" }, ...errorResponses },
        },
      },
      async (request, reply) => {
        await runtime.untagResource(resource(request.params.name), [request.params.key]);
        return reply.code(204).send();
      },
    );
  }
};
