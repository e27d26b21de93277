import type { Json } from "../engine/core/json.js";
import type { MockResponse } from "../engine/drivers/tasks.js";
import { TaskError, type TaskRunner } from "./runner.js";

/**
 * AWS Step Functions Local–style mocks: per execution and Task state name, the
 * responses of successive invocations (what the conformance cases carry). For
 * tests; a state with no mock left fails as the in-memory driver does.
 */
export function mockRunner(
  mocksOf: (executionId: string) => Record<string, MockResponse[]> | undefined,
): TaskRunner {
  const used = new Map<string, number>();
  return {
    name: "mock",
    handles: () => true,
    answersCallbacks: true,
    async run(request) {
      const list = mocksOf(request.executionId)?.[request.stateName];
      if (!list) {
        throw new TaskError(
          "States.TaskFailed",
          `No task handler is registered for resource '${request.resource}'`,
        );
      }
      // Count by attempt id so a redelivered attempt gets the same answer.
      const key = `${request.executionId}\u0000${request.stateName}`;
      const seenKey = `${key}\u0000${request.taskId}`;
      let index = used.get(seenKey);
      if (index === undefined) {
        index = used.get(key) ?? 0;
        used.set(key, index + 1);
        used.set(seenKey, index);
      }
      const next = list[index];
      if (!next) {
        throw new TaskError(
          "States.TaskFailed",
          `No mocked response left for state '${request.stateName}'`,
        );
      }
      if ("Return" in next) return next.Return as Json;
      throw new TaskError(next.Throw.Error, next.Throw.Cause ?? "");
    },
  };
}
