import type { Effect } from "../core/effects.js";
import type { RunEventBody } from "../core/events.js";
import type { Json } from "../core/json.js";

/** What a task handler is told about the attempt it serves. */
export interface TaskInvocation {
  resource: string;
  stateName: string;
  /** Stable across redeliveries of the same attempt: send it as an idempotency key. */
  taskId: string;
  /**
   * Stable across Retry attempts of one entry into the state (engine/core/operation-key.ts):
   * the key that makes a side effect happen once.
   */
  operationKey: string;
  attempt: number;
  taskToken?: string;
}

/** An in-process task: returns the task result, or throws `{ error, cause }` / an Error. */
export type TaskHandler = (input: Json, invocation: TaskInvocation) => Json | Promise<Json>;

export type TaskHandlers =
  Record<string, TaskHandler> | ((resource: string) => TaskHandler | undefined);

/** AWS Step Functions Local's mocked response, one per invocation. */
export type MockResponse = { Return: Json } | { Throw: { Error: string; Cause?: string } };

type TaskEvent = RunEventBody;

function lookup(handlers: TaskHandlers | undefined, resource: string): TaskHandler | undefined {
  if (!handlers) return undefined;
  const bare = resource.replace(/\.(waitForTaskToken|sync(:2)?)$/, "");
  if (typeof handlers === "function") return handlers(resource) ?? handlers(bare);
  return handlers[resource] ?? handlers[bare];
}

/** A thrown `{error, cause}` (or StatesError-like object) names the task's error. */
export function taskFailure(taskId: string, err: unknown): TaskEvent {
  if (typeof err === "object" && err !== null && "error" in err && typeof err.error === "string") {
    const cause = "cause" in err && typeof err.cause === "string" ? err.cause : undefined;
    const event: TaskEvent = { type: "TaskFailed", taskId, error: err.error };
    if (cause !== undefined) (event as { cause?: string }).cause = cause;
    return event;
  }
  const message = err instanceof Error ? err.message : String(err);
  const name = err instanceof Error && err.name && err.name !== "Error" ? err.name : "Error";
  return { type: "TaskFailed", taskId, error: name, cause: message } as TaskEvent;
}

/**
 * How the in-memory driver completes a task: from the next mock response of its
 * state, else from a registered handler, else it fails naming the resource.
 */
export function resolveTask(
  effect: Extract<Effect, { type: "RunTask" }>,
  mocks: Record<string, MockResponse[]>,
  handlers: TaskHandlers | undefined,
): { kind: "now"; event: TaskEvent } | { kind: "later"; promise: Promise<TaskEvent> } {
  const { taskId } = effect;
  const mockList = mocks[effect.stateName];
  if (mockList) {
    const next = mockList.shift();
    if (!next) {
      return {
        kind: "now",
        event: {
          type: "TaskFailed",
          taskId,
          error: "States.TaskFailed",
          cause: `No mocked response left for state '${effect.stateName}'`,
        } as TaskEvent,
      };
    }
    if ("Return" in next)
      return {
        kind: "now",
        event: { type: "TaskSucceeded", taskId, output: next.Return } as TaskEvent,
      };
    const event = { type: "TaskFailed", taskId, error: next.Throw.Error } as TaskEvent & {
      cause?: string;
    };
    if (next.Throw.Cause !== undefined) event.cause = next.Throw.Cause;
    return { kind: "now", event };
  }
  const handler = lookup(handlers, effect.resource);
  if (!handler) {
    return {
      kind: "now",
      event: {
        type: "TaskFailed",
        taskId,
        error: "States.TaskFailed",
        cause: `No task handler is registered for resource '${effect.resource}'`,
      } as TaskEvent,
    };
  }
  const invocation: TaskInvocation = {
    resource: effect.resource,
    stateName: effect.stateName,
    taskId,
    operationKey: effect.operationKey,
    attempt: effect.attempt,
  };
  if (effect.taskToken !== undefined) invocation.taskToken = effect.taskToken;
  const promise = (async (): Promise<TaskEvent> => {
    try {
      const output = await handler(effect.input, invocation);
      return { type: "TaskSucceeded", taskId, output: output ?? null } as TaskEvent;
    } catch (err) {
      return taskFailure(taskId, err);
    }
  })();
  return { kind: "later", promise };
}
