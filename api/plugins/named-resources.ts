import type { FastifyInstance } from "fastify";
import type { Runtime } from "../../runtime/contract/index.js";
import { TriggerError } from "../../runtime/triggers/errors.js";
import type { Triggers } from "../../runtime/triggers/triggers.js";
import { ApiError, apiError } from "../errors.js";
import { errorResponses, listOf } from "../schemas.js";

/**
 * The five routes of a named trigger resource (schedules, event rules): create,
 * list, describe, replace and delete, `POST /x`, `GET /x`, `GET|PUT|DELETE /x/:name`.
 * A plugin says what differs (its path, names, schemas and store); the routes, their
 * permissions and how a store's refusal becomes an API error are written once here.
 */

/** An alias a target names: not all digits, so it is never read as a version. */
export const ALIAS_PATTERN = "^(?=.*[A-Za-z_.-])[A-Za-z0-9_.-]{1,80}$";

/** The runtime's triggers (the Redis runtime has them); another runtime answers 503. */
export function triggersOf(runtime: Runtime): Triggers {
  const triggers = (runtime as { triggers?: Triggers }).triggers;
  if (!triggers)
    throw apiError("ServiceUnavailable", { reason: "triggers need the Redis runtime" });
  return triggers;
}

/** A trigger store's refusal as the API's error: a 400 names the field by JSON pointer. */
export function triggerApiError(err: unknown, name?: string): unknown {
  if (!(err instanceof TriggerError)) return err;
  if (err.code === "InvalidRequest") {
    const path = err.pointer ?? "";
    return new ApiError(
      "InvalidRequest",
      `Invalid body: ${path ? `${path}: ` : ""}${err.message}`,
      [{ location: "body", path, message: err.message }],
    );
  }
  return apiError(err.code, { name: name ?? "" });
}

/** Runs a store call, answering its refusal as the API's error about `name`. */
export async function guarded<T>(name: string | undefined, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw triggerApiError(err, name);
  }
}

/** What the routes call: a store of named resources (runtime/triggers/). */
export interface NamedStore<Input, Answer> {
  create(name: string, input: Input): Promise<Answer>;
  list(): Promise<Answer[]>;
  get(name: string): Promise<Answer>;
  update(name: string, input: Input): Promise<Answer>;
  delete(name: string): Promise<void>;
}

/** An object schema with `required` and `properties`, as `as const` writes it. */
interface ObjectSchema {
  readonly type: "object";
  readonly required: readonly string[];
  readonly properties: Readonly<Record<string, unknown>>;
}

export interface NamedResource<Input, Answer> {
  /** The collection's path: `/schedules`. */
  path: string;
  /** What one is called in the summaries: `schedule`, `event rule`. */
  noun: string;
  tags: string[];
  /** The name's schema (its pattern: the executions it starts are named after it). */
  name: { readonly type: "string"; readonly pattern: string };
  /** The body of a create (without `name`) and of a replace. */
  body: ObjectSchema;
  /** One resource, as every route answers it. */
  answer: object;
  /** What a replace does beyond replacing (OpenAPI). */
  replaceDescription?: string;
  store(triggers: Triggers): NamedStore<Input, Answer>;
}

export function namedResourceRoutes<Input extends object, Answer>(
  app: FastifyInstance,
  runtime: Runtime,
  resource: NamedResource<Input, Answer>,
): void {
  const { path, noun, tags, body, answer } = resource;
  const one = /^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`;
  const store = () => resource.store(triggersOf(runtime));
  const params = {
    type: "object",
    required: ["name"],
    properties: { name: resource.name },
  } as const;
  const write = { permission: "definitions:write" } as const;
  const read = { permission: "definitions:read" } as const;

  app.post<{ Body: { name: string } }>(
    path,
    {
      config: write,
      schema: {
        summary: `Create ${one}`,
        tags,
        body: {
          ...body,
          required: ["name", ...body.required],
          properties: { name: resource.name, ...body.properties },
        },
        response: { 201: answer, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { name, ...input } = request.body;
      // The body schema checked it: the input's fields beside `name`.
      const created = await guarded(name, () => store().create(name, input as Input));
      return reply.code(201).send(created);
    },
  );

  app.get(
    path,
    {
      config: read,
      schema: {
        summary: `List ${noun}s`,
        tags,
        response: { 200: listOf(answer), ...errorResponses },
      },
    },
    async () => ({ items: await store().list() }),
  );

  app.get<{ Params: { name: string } }>(
    `${path}/:name`,
    {
      config: read,
      schema: {
        summary: `Describe ${one}`,
        tags,
        params,
        response: { 200: answer, ...errorResponses },
      },
    },
    async (request) => guarded(request.params.name, () => store().get(request.params.name)),
  );

  app.put<{ Params: { name: string }; Body: object }>(
    `${path}/:name`,
    {
      config: write,
      schema: {
        summary: `Replace ${one}`,
        ...(resource.replaceDescription ? { description: resource.replaceDescription } : {}),
        tags,
        params,
        body,
        response: { 200: answer, ...errorResponses },
      },
    },
    async (request) =>
      guarded(request.params.name, () =>
        store().update(request.params.name, request.body as Input),
      ),
  );

  app.delete<{ Params: { name: string } }>(
    `${path}/:name`,
    {
      config: write,
      schema: {
        summary: `Delete ${one}`,
        tags,
        params,
        response: { 204: { type: "null" }, ...errorResponses },
      },
    },
    async (request, reply) => {
      await guarded(request.params.name, () => store().delete(request.params.name));
      return reply.code(204).send();
    },
  );
}
