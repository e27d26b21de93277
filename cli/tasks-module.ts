import { existsSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import type { TaskHandlers } from "../engine/drivers/memory.js";
import { findFunctionHandler, handlersFromModule } from "../task-runners/function.js";
import type { FunctionHandler } from "../task-runners/function.js";
import { UsageError } from "./command.js";

/**
 * How a tasks module is imported: `import()` here, the loader's `import()` in the local
 * commands' bundle (cli/local.ts), whose code has no working `import()` of its own.
 */
let importModule = (specifier: string): Promise<unknown> => import(specifier);

export function setModuleImporter(importer: (specifier: string) => Promise<unknown>): void {
  importModule = importer;
}

/**
 * The one meaning of a tasks module, for `run --tasks`, `serve` and `worker`
 * (STEPWISE_TASKS): each named function export `<name>` serves the resource
 * `function:<name>`; a default export that is an object maps whole Resource
 * strings (e.g. `arn:aws:states:::lambda:invoke`) to functions.
 */
export async function loadTasksModule(
  path: string,
  setting: string,
): Promise<Record<string, FunctionHandler>> {
  const absolute = resolve(path);
  if (!existsSync(absolute)) {
    throw new UsageError(`${setting}: no such file '${path}' (resolved to ${absolute})`, false);
  }
  let mod: Record<string, unknown>;
  try {
    mod = (await importModule(pathToFileURL(absolute).href)) as Record<string, unknown>;
  } catch (err) {
    const message = err instanceof Error ? err.message.split("\n")[0] : String(err);
    throw new UsageError(`${setting}: cannot load '${path}': ${message}`, false);
  }
  const handlers = handlersFromModule(mod);
  if (Object.keys(handlers).length === 0) {
    throw new UsageError(
      `${setting}: '${path}' exports no function; export \`async function charge(input)\` to serve ` +
        "function:charge, or a default object mapping Resource strings to functions",
      false,
    );
  }
  return handlers;
}

/** The same handlers for the in-memory driver of `stepwise run`. */
export function memoryTaskHandlers(handlers: Record<string, FunctionHandler>): TaskHandlers {
  return (resource) => {
    const handler = findFunctionHandler(handlers, resource);
    if (!handler) return undefined;
    return async (input, invocation) =>
      (await handler(input, {
        ...invocation,
        input,
        executionId: "local",
        signal: new AbortController().signal,
      })) ?? null;
  };
}
