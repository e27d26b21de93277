import type { JsonObject } from "../engine/core/json.js";
import {
  answersAtOnce,
  isolatedDefinition,
  testState,
  TestStateError,
  type TestStateRequest,
  type TestStateResult,
} from "../engine/testing/test-state.js";
import { TransitionLimitExceeded } from "../engine/drivers/memory.js";
import type { TaskHandlers } from "../engine/drivers/tasks.js";
import { findRunner, type TaskRunner } from "../task-runners/index.js";
import { check } from "./definition.js";
import { apiError } from "./errors.js";

/**
 * AWS (API reference, TestState): "The TestState API can run for up to five minutes.
 * If the execution of a state exceeds this duration, it fails with the States.Timeout
 * error."
 */
export const TEST_STATE_LIMIT_MS = 5 * 60 * 1000;

/**
 * A Task without a mock calls its resource through the service's runners, as AWS
 * calls the real service: the same runners a worker has, under the same egress
 * policy (task-runners/egress.ts), each call bounded by TEST_STATE_LIMIT_MS.
 */
export function runnerTasks(
  runners: readonly TaskRunner[],
  limitMs = TEST_STATE_LIMIT_MS,
): TaskHandlers {
  return (resource) => {
    const runner = findRunner(runners, resource);
    if (!runner) return undefined;
    return async (input, invocation) => {
      const signal = AbortSignal.timeout(limitMs);
      try {
        return await runner.run({
          resource: invocation.resource,
          stateName: invocation.stateName,
          taskId: invocation.taskId,
          operationKey: invocation.operationKey,
          executionId: TEST_STATE_EXECUTION,
          attempt: invocation.attempt,
          input,
          signal,
        });
      } catch (err) {
        if (signal.aborted) {
          throw {
            error: "States.Timeout",
            cause: `TestState calls a resource for at most ${limitMs / 1000} seconds`,
          };
        }
        throw err;
      }
    };
  };
}

/** The execution a TestState call says it belongs to (there is none). */
const TEST_STATE_EXECUTION = "arn:aws:states:local:000000000000:execution:TestState:test";

/** The Task resource of a request's state, when the state is a Task without a mock. */
function unmockedResource(request: Omit<TestStateRequest, "now" | "seed">): string | undefined {
  if (request.mock) return undefined;
  const def = request.definition;
  const states = def.States;
  let state: unknown = def;
  if (typeof states === "object" && states !== null && !Array.isArray(states)) {
    const name = request.stateName ?? (typeof def.StartAt === "string" ? def.StartAt : "");
    state = (states as Record<string, unknown>)[name];
  }
  const s = state as { Type?: unknown; Resource?: unknown } | undefined;
  return s?.Type === "Task" && typeof s.Resource === "string" ? s.Resource : undefined;
}

/**
 * TestState for both APIs: the state is validated as a machine of its own (so a
 * malformed state is InvalidDefinition, never a crash), then run on the pure step
 * (engine/testing/test-state.ts). A Task without a mock calls its resource with
 * `runners` (none: it needs a mock).
 */
export async function runTestState(
  request: Omit<TestStateRequest, "now" | "seed">,
  serves: (resource: string) => boolean,
  runners: readonly TaskRunner[] = [],
): Promise<TestStateResult> {
  const resource = unmockedResource(request);
  const full: TestStateRequest = {
    ...request,
    ...(resource !== undefined && runners.length > 0 ? { tasks: runnerTasks(runners) } : {}),
    now: new Date().toISOString(),
    seed: "test-state",
  };
  let machine;
  try {
    machine = isolatedDefinition(full);
  } catch (err) {
    if (err instanceof TestStateError)
      throw apiError("InvalidRequest", { location: "body", reason: err.message });
    throw err;
  }
  const checked = check({ source: machine as unknown as JsonObject }, serves);
  if (!checked.valid) {
    const first = checked.diagnostics.find((d) => d.severity === "error");
    throw apiError(
      "InvalidDefinition",
      { reason: first ? `${first.message} at ${first.path || "/"}` : "the validator rejected it" },
      checked.diagnostics,
    );
  }
  if (
    resource !== undefined &&
    answersAtOnce(resource) &&
    runners.length > 0 &&
    !findRunner(runners, resource)
  ) {
    throw apiError("InvalidRequest", {
      location: "body",
      reason: `no task runner of this service calls '${resource}': give mock.result or mock.errorOutput`,
    });
  }
  try {
    return await testState(full);
  } catch (err) {
    if (err instanceof TestStateError)
      throw apiError("InvalidRequest", { location: "body", reason: err.message });
    if (err instanceof TransitionLimitExceeded)
      throw apiError("InvalidRequest", {
        location: "definition",
        reason: "the state loops to itself",
      });
    throw err;
  }
}
