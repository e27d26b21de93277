import { httpRunner } from "./http.js";
import { modelRunner } from "./model/index.js";
import { taskMode } from "./resources.js";
import { findRunner, type TaskRunner } from "./runner.js";

export {
  findFunctionHandler,
  functionRunner,
  handlersFromModule,
  type FunctionHandler,
} from "./function.js";
export { httpRunner, type HttpRunnerOptions } from "./http.js";
export { mockRunner } from "./mock.js";
export {
  MODEL_ERRORS,
  isModelResource,
  modelRunner,
  type ModelEndpoint,
  type ModelEndpoints,
  type ModelRunnerOptions,
} from "./model/index.js";
export {
  TaskError,
  describeFailure,
  findRunner,
  type TaskRequest,
  type TaskRunner,
} from "./runner.js";
export { activityName, isApproval, taskMode, type TaskMode } from "./resources.js";

/**
 * Runners every worker has after the configured ones. The model runner reads
 * `STEPWISE_MODEL_ENDPOINTS` here, so a bad file stops the process at start.
 */
export function defaultRunners(): TaskRunner[] {
  return [httpRunner(), modelRunner()];
}

/** Whether a service with these runners can serve a Task Resource (activities and approvals need none). */
export function servedBy(runners: readonly TaskRunner[]): (resource: string) => boolean {
  return (resource) => taskMode(resource) !== "call" || findRunner(runners, resource) !== undefined;
}
