import type { RouteOptions } from "fastify";
import { scopesFor, type Permission } from "./auth.js";
import { ERRORS, ERROR_NAMES } from "./errors.js";
import { errorBody } from "./schemas.js";

/**
 * Builds the OpenAPI 3.1 document from the routes' own JSON Schemas (collected with
 * an onRoute hook), so the document cannot drift from what the server validates.
 * OpenAPI 3.1 is JSON Schema 2020-12 compatible, so schemas go in unchanged.
 */
interface RouteDoc {
  method: string;
  url: string;
  schema: Record<string, unknown>;
  permission: Permission;
}

type Schema = Record<string, unknown>;

const STATUS_TEXT: Record<string, string> = {
  "200": "OK",
  "201": "Created",
  "204": "No content",
  "4xx": "A client error; `error` names an entry of the error registry",
  "5xx": "A server error; `error` names an entry of the error registry",
};

export class OpenApiCollector {
  private readonly routes: RouteDoc[] = [];

  add(route: RouteOptions): void {
    const config = (route.config ?? {}) as { permission?: Permission; hidden?: boolean };
    if (config.hidden) return;
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (method === "HEAD" || method === "OPTIONS") continue;
      this.routes.push({
        method: method.toLowerCase(),
        url: route.url,
        schema: (route.schema ?? {}) as Schema,
        permission: config.permission ?? "public",
      });
    }
  }

  document(version: string): Schema {
    const paths: Record<string, Record<string, Schema>> = {};
    for (const route of this.routes) {
      const path = route.url.replace(/:(\w+)/g, "{$1}");
      (paths[path] ??= {})[route.method] = operation(route);
    }
    return {
      openapi: "3.1.0",
      info: {
        title: "Stepwise",
        version,
        description: [
          "A self-hosted, durable engine for the Amazon States Language.",
          "",
          "Authenticate with `Authorization: Bearer <secret>` or `x-api-key: <secret>`.",
          "Scopes: `admin` (everything), `run` (start, stop and read executions, read state",
          "machines), `callback` (task-token callbacks and activity polling only).",
          "",
          "Errors answer `{error, message, details}`; `error` is one of:",
          "",
          "| error | status | meaning |",
          "|---|---|---|",
          ...ERROR_NAMES.map((n) => `| ${n} | ${ERRORS[n].status} | ${ERRORS[n].description} |`),
        ].join("\n"),
      },
      components: {
        securitySchemes: {
          bearer: { type: "http", scheme: "bearer" },
          apiKey: { type: "apiKey", in: "header", name: "x-api-key" },
        },
        schemas: {
          Error: {
            ...errorBody,
            properties: { ...errorBody.properties, error: { type: "string", enum: ERROR_NAMES } },
          },
        },
      },
      "x-errors": ERROR_NAMES.map((name) => ({
        name,
        status: ERRORS[name].status,
        message: ERRORS[name].template,
        description: ERRORS[name].description,
      })),
      paths,
    };
  }
}

function operation(route: RouteDoc): Schema {
  const { schema } = route;
  const op: Schema = {};
  for (const key of ["summary", "description", "tags", "operationId"]) {
    if (schema[key] !== undefined) op[key] = schema[key];
  }
  const parameters = [
    ...params(schema.params as Schema | undefined, "path"),
    ...params(schema.querystring as Schema | undefined, "query"),
  ];
  if (parameters.length > 0) op.parameters = parameters;
  if (schema.body !== undefined) op.requestBody = requestBody(schema.body as Schema);
  op.responses = responses(schema.response as Record<string, Schema> | undefined);
  if (route.permission === "public") {
    op.security = [];
  } else {
    op.security = [{ bearer: [] }, { apiKey: [] }];
    op["x-scopes"] = scopesFor(route.permission);
  }
  return op;
}

function params(schema: Schema | undefined, where: "path" | "query"): Schema[] {
  if (!schema) return [];
  const properties = (schema.properties ?? {}) as Record<string, Schema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, s]) => {
    const { description, ...rest } = s;
    return {
      name,
      in: where,
      required: where === "path" || required.has(name),
      ...(description !== undefined ? { description } : {}),
      schema: rest,
    };
  });
}

function requestBody(body: Schema): Schema {
  const content = body.content as Record<string, { schema: Schema }> | undefined;
  if (content) return { required: false, content };
  return { required: false, content: { "application/json": { schema: body } } };
}

function responses(response: Record<string, Schema> | undefined): Schema {
  const out: Schema = {};
  for (const [status, schema] of Object.entries(response ?? {})) {
    const description =
      typeof schema.description === "string"
        ? schema.description
        : (STATUS_TEXT[status] ?? `HTTP ${status}`);
    // A route that answers other than JSON (/metrics) declares `content` itself.
    const content = schema.content as Record<string, { schema: Schema }> | undefined;
    out[status] =
      status === "204" || schema.type === "null"
        ? { description }
        : content
          ? { description, content }
          : {
              description,
              content: {
                "application/json": {
                  schema: status.endsWith("xx") ? { $ref: "#/components/schemas/Error" } : schema,
                },
              },
            };
  }
  return out;
}
