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

/** A worker started without a logger logs at `LOG_LEVEL` (default info) to stderr, where its errors always went. */
export function defaultLogger(): WorkerLog {
  return pino({ level: process.env.LOG_LEVEL ?? "info" }, pino.destination(2));
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
