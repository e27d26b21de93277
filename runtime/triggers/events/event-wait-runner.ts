import type { Redis } from "ioredis";
import type { Json } from "../../../engine/core/json.js";
import { TaskError, type TaskRunner } from "../../../task-runners/runner.js";
import { isEventWait } from "../../../task-runners/resources.js";
import { checkWaitParameters, EventWaits } from "./event-waits.js";
import { triggerKeys } from "../trigger-keys.js";

/**
 * The worker's runner of `arn:aws:states:::stepwise:waitForEvent`: it registers the
 * task's token as a waiter (event-waits.ts) and returns; the task then waits for
 * its token like a `.waitForTaskToken` task (task-runners/resources.ts
 * `waitsForCallback`), answered by the event that matches or by the timeout.
 * Registering again after a crash is harmless: the waiter is keyed by the token.
 */
export function eventWaitRunner(redis: Redis, prefix: string): TaskRunner {
  const waits = new EventWaits(redis, triggerKeys(prefix));
  return {
    name: "waitForEvent",
    handles: isEventWait,
    async run(request): Promise<Json> {
      if (request.taskToken === undefined)
        throw new TaskError("States.Runtime", "waitForEvent runs without a task token");
      let params;
      try {
        params = checkWaitParameters(request.input);
      } catch (err) {
        throw new TaskError("States.Runtime", `waitForEvent: ${(err as Error).message}`);
      }
      await waits.register(request.taskToken, request.executionId, params);
      return { waitingSince: new Date().toISOString() };
    },
  };
}
