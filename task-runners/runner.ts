import type { Json } from "../engine/core/json.js";

/**
 * What a Task state's resource calls. A runner does one attempt and returns its
 * result, or throws a `TaskError` (error name + cause) that Retry/Catch match.
 * Runners run OUTSIDE the durable commit: a worker crash during a call re-runs
 * the attempt with the same `taskId`, and a Retry calls again with the same
 * `operationKey`: a runner passes that on as the idempotency key wherever the
 * callee supports one.
 */
export interface TaskRequest {
  resource: string;
  stateName: string;
  /** This attempt's id, stable across its redeliveries (one per Retry attempt). */
  taskId: string;
  /**
   * The idempotency key: stable across Retry attempts, crashes and redeliveries of
   * one entry into the state, new when the state is entered again (engine/core/operation-key.ts).
   */
  operationKey: string;
  executionId: string;
  attempt: number;
  input: Json;
  /** Present for `.waitForTaskToken`: pass it to whoever will call back. */
  taskToken?: string;
  timeoutSeconds?: number;
  heartbeatSeconds?: number;
  credentials?: Json;
  /** Aborted when the worker shuts down or the task no longer matters. */
  signal: AbortSignal;
  /** The attempt's place in the execution's W3C trace (runtime/tracing/attempt-trace.ts). */
  trace?: AttemptTrace;
}

/**
 * W3C trace context of one task attempt: the attempt is a span of the execution's
 * trace, and what it calls is a child of it (`traceparent` names that child).
 */
export interface AttemptTrace {
  traceId: string;
  /** The attempt's span. */
  spanId: string;
  /** The span of the state entry the attempt belongs to. */
  parentSpanId: string;
  /** What an outgoing request sends: the call's span, a child of the attempt's. */
  traceparent: string;
  tracestate?: string;
}

export interface TaskRunner {
  /** For logs and errors. */
  name: string;
  handles(resource: string): boolean;
  run(request: TaskRequest): Promise<Json>;
  /**
   * The result stands for the callback of a `.waitForTaskToken` task (mocks):
   * otherwise such a task waits for its token whatever the call returned.
   */
  answersCallbacks?: boolean;
}

/** A task failure with an ASL error name (e.g. `States.Http.StatusCode.429`). */
export class TaskError extends Error {
  constructor(
    readonly error: string,
    override readonly cause: string = "",
  ) {
    super(`${error}: ${cause}`);
    this.name = "TaskError";
  }
}

/** Any thrown value → an ASL error name and cause (as the in-memory driver does). */
export function describeFailure(err: unknown): { error: string; cause: string } {
  if (err instanceof TaskError) return { error: err.error, cause: err.cause };
  if (typeof err === "object" && err !== null && "error" in err && typeof err.error === "string") {
    const cause = "cause" in err && typeof err.cause === "string" ? err.cause : "";
    return { error: err.error, cause };
  }
  const message = err instanceof Error ? err.message : String(err);
  const name = err instanceof Error && err.name && err.name !== "Error" ? err.name : "Error";
  return { error: name, cause: message };
}

/** The first runner that handles the resource. */
export function findRunner(
  runners: readonly TaskRunner[],
  resource: string,
): TaskRunner | undefined {
  return runners.find((r) => r.handles(resource));
}
