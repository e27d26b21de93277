import { pino, type Logger } from "pino";
import type { TaskRequest } from "../../task-runners/runner.js";

/**
 * Log lines of the worker: pino JSON, like the API's (fastify logs through pino),
 * so one collector reads both, and each line about an execution carries the
 * fields that find it everywhere else — `executionId`, `stateName`, `attempt`
 * (1, 2, 3… as the `Stepwise-Attempt` header counts) and `traceId` (its spans,
 * the `traceparent` its tasks sent).
 */
export type { Logger };

/** What the worker logs through: a pino logger, or fastify's (the same pino underneath). */
export type WorkerLog = Pick<Logger, "warn" | "error">;

/** A worker started without a logger logs at info to stderr, where its errors always went. */
export function defaultLogger(): WorkerLog {
  return pino({ level: "info" }, pino.destination(2));
}

/** The correlation fields of a task attempt's lines. */
export function attemptFields(request: TaskRequest): Record<string, string | number> {
  return {
    executionId: request.executionId,
    stateName: request.stateName,
    attempt: request.attempt + 1,
    ...(request.trace ? { traceId: request.trace.traceId } : {}),
    taskId: request.taskId,
    resource: request.resource,
  };
}

/**
 * An error about one execution, carrying the fields its log line should have:
 * `onError` receives plain errors, and the worker's logger spreads these fields
 * (worker.ts) so that such a line is found with the execution's other lines.
 */
export class ExecutionFault extends Error {
  constructor(
    message: string,
    readonly fields: Record<string, string | number>,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "ExecutionFault";
  }
}

/** What the interpreter threw while stepping a state of an execution. */
export function executionFault(
  err: unknown,
  executionId: string,
  stateName: string | undefined,
): ExecutionFault {
  const message = err instanceof Error ? err.message : String(err);
  return new ExecutionFault(
    `execution ${executionId}${stateName !== undefined ? `, state '${stateName}'` : ""}: ${message}`,
    { executionId, ...(stateName !== undefined ? { stateName } : {}) },
    { cause: err },
  );
}

/** The fields a line about `err` carries (an ExecutionFault's own, else none). */
export function faultFields(err: unknown): Record<string, string | number> {
  return err instanceof ExecutionFault ? err.fields : {};
}
