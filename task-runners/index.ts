import type { PayloadPolicy } from "../engine/core/payload-ref.js";
import { awsRunner, type AwsRunnerOptions } from "./aws/index.js";
import type { EgressPolicy } from "./egress.js";
import { httpRunner, MAX_RESPONSE_BYTES } from "./http.js";
import type { ModelEndpoints } from "./model/endpoints.js";
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
export { DEFAULT_EGRESS, parseEgressAllow, type EgressPolicy } from "./egress.js";
export { mockRunner } from "./mock.js";
export {
  awsRunner,
  isAwsIntegration,
  parseAwsEndpoints,
  type AwsRunner,
  type AwsRunnerOptions,
} from "./aws/index.js";
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

/** What the default runners are told (config/ reads it from the environment). */
export interface DefaultRunnerOptions {
  /** What HTTP tasks may reach (default: nothing loopback, private or link-local). */
  egress?: EgressPolicy;
  /** The longest HTTP response body read (default 256 KiB, or `payloads.resolveMaxBytes`). */
  maxResponseBytes?: number;
  /** Large results go by reference: a body may be as large as a read into one may load. */
  payloads?: PayloadPolicy;
  /** The model runner's endpoints (default: none). */
  modelEndpoints?: ModelEndpoints;
  /** Where the model runner finds the keys its endpoints name by variable. */
  secrets?: Readonly<Record<string, string | undefined>>;
  /** The AWS runner's region and endpoint overrides (it takes `egress` from here). */
  aws?: Pick<AwsRunnerOptions, "region" | "endpoints" | "credentials" | "publishLocal">;
}

/**
 * Runners every worker has after the configured ones. The model runner is not
 * under the egress policy: a definition names a configured endpoint, never an
 * address, and a model served on the operator's own network (vLLM, Ollama) is the
 * common case.
 */
export function defaultRunners(options: DefaultRunnerOptions = {}): TaskRunner[] {
  return [
    httpRunner({
      ...(options.egress ? { egress: options.egress } : {}),
      maxResponseBytes:
        options.maxResponseBytes ?? options.payloads?.resolveMaxBytes ?? MAX_RESPONSE_BYTES,
    }),
    modelRunner({
      ...(options.modelEndpoints ? { endpoints: options.modelEndpoints } : {}),
      ...(options.secrets ? { env: options.secrets } : {}),
    }),
    // AWS service integrations: the SDK is loaded when a task first calls AWS.
    awsRunner({
      ...options.aws,
      ...(options.egress ? { egress: options.egress } : {}),
      maxResponseBytes:
        options.maxResponseBytes ?? options.payloads?.resolveMaxBytes ?? MAX_RESPONSE_BYTES,
    }),
  ];
}

/** Whether a service with these runners can serve a Task Resource (activities and approvals need none). */
export function servedBy(runners: readonly TaskRunner[]): (resource: string) => boolean {
  return (resource) => taskMode(resource) !== "call" || findRunner(runners, resource) !== undefined;
}
