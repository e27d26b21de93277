import type { EgressPolicy } from "./egress.js";
import { egressPolicyFromEnv } from "./egress.js";
import { httpRunner, maxResponseBytesFromEnv } from "./http.js";
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
export { egressPolicyFromEnv, parseEgressAllow, type EgressPolicy } from "./egress.js";
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
 * Runners every worker has after the configured ones (egress: default
 * `STEPWISE_EGRESS_ALLOW`). The model runner reads `STEPWISE_MODEL_ENDPOINTS` here,
 * so a bad file stops the process at start; it is not under the egress policy: a
 * definition names a configured endpoint, never an address, and a model served on
 * the operator's own network (vLLM, Ollama) is the common case.
 */
export function defaultRunners(options: { egress?: EgressPolicy } = {}): TaskRunner[] {
  return [httpRunner(options.egress ? { egress: options.egress } : {}), modelRunner()];
}

/** Whether a service with these runners can serve a Task Resource (activities and approvals need none). */
export function servedBy(runners: readonly TaskRunner[]): (resource: string) => boolean {
  return (resource) => taskMode(resource) !== "call" || findRunner(runners, resource) !== undefined;
}

/** Reads the runners' settings once at start-up, so a bad value stops the service by name. */
export function checkRunnerSettings(env: NodeJS.ProcessEnv): void {
  egressPolicyFromEnv(env);
  maxResponseBytesFromEnv(env);
}
