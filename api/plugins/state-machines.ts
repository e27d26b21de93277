import type { FastifyPluginAsync } from "fastify";
import { definitionSource, check, requireValidDefinition, sentText } from "../definition.js";
import { TEXT_TYPES } from "../body.js";
import { apiError } from "../errors.js";
import { bareDefinition } from "../shape-hints.js";
import {
  diagnosticSchema,
  errorResponses,
  modelBudget,
  nameSchema,
  page,
  pagingQuery,
  stateMachineDetail,
  stateMachineSummary,
} from "../schemas.js";
import type { PluginOptions } from "../server.js";
import type * as Shapes from "../shapes.js";
import type { ModelBudget } from "../../task-runners/model/budget.js";

/**
 * State machines: validate, create, update (a new version), read, list.
 *
 * A definition is accepted three ways: `{"definition": {...}}`, `{"definition": "<JSON
 * or YAML text>"}`, or the text itself as the body with Content-Type
 * application/yaml (or text/plain), the name then in `?name=` (create) or the path.
 */

const definitionField = {
  description: "The ASL definition: a JSON object, or JSON or YAML text.",
  type: ["object", "string"],
} as const;

const substitutionsField = {
  description:
    "Values for ${Name} placeholders in the definition (as SAM's DefinitionSubstitutions), filled in textually before parsing; placeholders left unfilled are UNRESOLVED_PLACEHOLDER warnings.",
  type: "object",
  additionalProperties: { type: ["string", "number", "boolean"] },
} as const;

const budgetField = {
  ...modelBudget,
  description:
    "Stepwise's: the model budget of every execution of this state machine (a start's `budget` overrides it field by field); JSON bodies only.",
};

/** The machine budget of a JSON body, if it has one. */
function budgetOf(body: unknown): ModelBudget | undefined {
  return typeof body === "object" && body !== null && "budget" in body
    ? (body as { budget: ModelBudget }).budget
    : undefined;
}

const textSchema = {
  schema: { type: "string", description: "The definition as YAML or JSON text." },
};

/** Request bodies by content type: JSON wraps the definition; text bodies are the definition. */
function definitionBody(json: Record<string, unknown>, required: string[]) {
  return {
    content: {
      "application/json": {
        schema: { type: "object", required, additionalProperties: false, properties: json },
      },
      ...Object.fromEntries(TEXT_TYPES.map((t) => [t, textSchema])),
    },
  };
}

/** What create and update answer: the summary, and the definition's warnings when it has some. */
const createdSummary = {
  ...stateMachineSummary,
  properties: {
    ...stateMachineSummary.properties,
    warnings: {
      type: "array",
      items: diagnosticSchema,
      description: "Warnings of the validator (UNSERVED_RESOURCE, …); the definition was stored.",
    },
  },
} as const;

export const stateMachinesPlugin: FastifyPluginAsync<PluginOptions> = async (
  app,
  { runtime, serves },
) => {
  app.post(
    "/state-machines/validate",
    {
      config: { permission: "definitions:read", textBody: true },
      preValidation: async (request) => {
        const hint = bareDefinition(request.body, '{"definition": {"StartAt": …, "States": …}}');
        if (hint) throw hint;
      },
      schema: {
        summary: "Validate a definition without storing it",
        tags: ["state machines"],
        body: definitionBody(
          {
            definition: definitionField,
            definitionSubstitutions: substitutionsField,
            budget: budgetField,
          },
          ["definition"],
        ),
        response: {
          200: {
            type: "object",
            required: ["valid", "diagnostics"],
            properties: {
              valid: { type: "boolean" },
              diagnostics: { type: "array", items: diagnosticSchema },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const { valid, diagnostics } = check(
        definitionSource(request.body, request.headers["content-type"]),
        serves,
      );
      return { valid, diagnostics };
    },
  );

  app.post<{ Body: { name?: string } | string | undefined; Querystring: { name?: string } }>(
    "/state-machines",
    {
      config: { permission: "definitions:write", textBody: true },
      preValidation: async (request) => {
        const hint = bareDefinition(
          request.body,
          '{"name": "<name>", "definition": {"StartAt": …, "States": …}}',
        );
        if (hint) throw hint;
      },
      schema: {
        summary: "Create a state machine (version 1)",
        tags: ["state machines"],
        querystring: {
          type: "object",
          properties: {
            name: { ...nameSchema, description: "The name, when the body is the definition text." },
          },
        },
        body: definitionBody(
          {
            name: nameSchema,
            definition: definitionField,
            definitionSubstitutions: substitutionsField,
            budget: budgetField,
          },
          ["name", "definition"],
        ),
        response: { 201: createdSummary, ...errorResponses },
      },
    },
    async (request, reply) => {
      const fromBody = typeof request.body === "object" ? request.body?.name : undefined;
      const name = fromBody ?? request.query.name;
      if (name === undefined) {
        throw apiError(
          "InvalidRequest",
          { location: "query string", reason: "'name' is required" },
          [{ location: "querystring", path: "/name", message: "'name' is required" }],
        );
      }
      if (
        fromBody !== undefined &&
        request.query.name !== undefined &&
        request.query.name !== fromBody
      ) {
        throw apiError(
          "InvalidRequest",
          { location: "query string", reason: "'name' differs from the body's 'name'" },
          [{ location: "querystring", path: "/name", message: "differs from the body's 'name'" }],
        );
      }
      const source = definitionSource(request.body, request.headers["content-type"]);
      const { definition, warnings } = requireValidDefinition(source, serves);
      const budget = budgetOf(request.body);
      const text = sentText(source);
      const created = await runtime.createStateMachine(name, definition, {
        ...(text !== undefined ? { definitionText: text } : {}),
        ...(budget ? { budget } : {}),
        ...(request.caller ? { caller: request.caller } : {}),
      });
      return reply.code(201).send(warnings.length > 0 ? { ...created, warnings } : created);
    },
  );

  app.put<{ Params: { name: string } }>(
    "/state-machines/:name",
    {
      config: { permission: "definitions:write", textBody: true },
      preValidation: async (request) => {
        const hint = bareDefinition(request.body, '{"definition": {"StartAt": …, "States": …}}');
        if (hint) throw hint;
      },
      schema: {
        summary:
          "Publish a new version (running executions stay on theirs); an identical definition returns the latest version",
        tags: ["state machines"],
        params: { type: "object", required: ["name"], properties: { name: nameSchema } },
        body: definitionBody(
          { definition: definitionField, definitionSubstitutions: substitutionsField },
          ["definition"],
        ),
        response: {
          200: {
            ...createdSummary,
            required: [...createdSummary.required, "created"],
            properties: {
              ...createdSummary.properties,
              created: {
                type: "boolean",
                description:
                  "false when the definition equals the latest version's, which is returned",
              },
            },
          },
          ...errorResponses,
        },
      },
    },
    async (request) => {
      const source = definitionSource(request.body, request.headers["content-type"]);
      const { definition, warnings } = requireValidDefinition(source, serves);
      const budget = budgetOf(request.body);
      const text = sentText(source);
      const updated = await runtime.updateStateMachine(request.params.name, definition, {
        ...(text !== undefined ? { definitionText: text } : {}),
        ...(budget ? { budget } : {}),
        ...(request.caller ? { caller: request.caller } : {}),
      });
      return warnings.length > 0 ? { ...updated, warnings } : updated;
    },
  );

  app.get<{ Querystring: { cursor?: string; limit?: number } }>(
    "/state-machines",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "List state machines (latest version of each)",
        tags: ["state machines"],
        querystring: { type: "object", properties: pagingQuery },
        response: { 200: page(stateMachineSummary), ...errorResponses },
      },
    },
    async (request): Promise<Shapes.Page<Shapes.StateMachineSummary>> => {
      const { cursor, limit } = request.query;
      return runtime.listStateMachines({
        ...(cursor !== undefined ? { cursor } : {}),
        ...(limit !== undefined ? { limit } : {}),
      });
    },
  );

  app.get<{ Params: { name: string }; Querystring: { version?: number } }>(
    "/state-machines/:name",
    {
      config: { permission: "definitions:read" },
      schema: {
        summary: "One state machine with its definition and versions",
        tags: ["state machines"],
        params: { type: "object", required: ["name"], properties: { name: nameSchema } },
        querystring: {
          type: "object",
          properties: {
            version: {
              type: "integer",
              minimum: 1,
              maximum: 2147483647,
              description: "A version number; the latest when absent.",
            },
          },
        },
        response: { 200: stateMachineDetail, ...errorResponses },
      },
    },
    async (request) => runtime.getStateMachine(request.params.name, request.query.version),
  );
};
