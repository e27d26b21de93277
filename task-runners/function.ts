import type { Json } from "../engine/core/json.js";
import { bareResource } from "./resources.js";
import type { TaskRequest, TaskRunner } from "./runner.js";

/** An in-process handler: returns the result, or throws (a `TaskError` names the ASL error). */
export type FunctionHandler = (
  input: Json,
  request: TaskRequest,
) => Json | Promise<Json> | undefined | Promise<undefined>;

/**
 * `function:<name>` resources, served by handlers the worker loads from its
 * configuration (`STEPWISE_TASKS`, a module exporting functions by name). A bare
 * `<name>` resource that matches a handler is accepted too.
 */
export function functionRunner(handlers: Record<string, FunctionHandler>): TaskRunner {
  const lookup = (resource: string): FunctionHandler | undefined =>
    findFunctionHandler(handlers, resource);
  return {
    name: "function",
    handles: (resource) => lookup(resource) !== undefined,
    async run(request) {
      const handler = lookup(request.resource)!;
      const output = await handler(request.input, request);
      return output ?? null;
    },
  };
}

/**
 * The handler of `resource`: `function:<name>` (and a bare `<name>`) finds the
 * handler `<name>`; any other resource finds the handler keyed by the whole
 * resource (a default export's map), `.sync`/`.waitForTaskToken` suffixes aside.
 */
export function findFunctionHandler(
  handlers: Record<string, FunctionHandler>,
  resource: string,
): FunctionHandler | undefined {
  const bare = bareResource(resource);
  const name = bare.startsWith("function:") ? bare.slice("function:".length) : bare;
  return Object.prototype.hasOwnProperty.call(handlers, name) ? handlers[name] : undefined;
}

/** Handlers from a loaded module: its named function exports (and those of `default`, if an object). */
export function handlersFromModule(mod: Record<string, unknown>): Record<string, FunctionHandler> {
  const handlers: Record<string, FunctionHandler> = {};
  const add = (source: Record<string, unknown>): void => {
    for (const [name, value] of Object.entries(source)) {
      if (typeof value === "function") handlers[name] = value as FunctionHandler;
    }
  };
  if (typeof mod.default === "object" && mod.default !== null)
    add(mod.default as Record<string, unknown>);
  add(mod);
  return handlers;
}
