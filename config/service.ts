import type { RuntimeSettings } from "../runtime/settings.js";
import type { DefaultRunnerOptions } from "../task-runners/index.js";
import type { WorkerOptions } from "../runtime/worker/worker.js";
import type { StepwiseConfig } from "./load.js";

/**
 * The runtime's settings from a configuration, once the Redis is known (`serve`
 * may have chosen or started one). The same for the API's runtime and every worker.
 */
export function runtimeSettings(config: StepwiseConfig, redisUrl: string): RuntimeSettings {
  return {
    ...config.runtime,
    redisUrl,
    ...(config.redis.cluster ? { redisCluster: config.redis.cluster } : {}),
  };
}

/** What a worker is told besides the runtime settings: concurrency and its task runners' settings. */
export function workerOptions(
  config: StepwiseConfig,
): Pick<
  WorkerOptions,
  | "concurrency"
  | "taskConcurrency"
  | "fireConcurrency"
  | "egress"
  | "httpMaxResponseBytes"
  | "modelEndpoints"
  | "secrets"
  | "itemStore"
  | "aws"
  | "eventsLocal"
> {
  return {
    concurrency: config.worker.concurrency,
    taskConcurrency: config.worker.taskConcurrency,
    fireConcurrency: config.worker.fireConcurrency,
    egress: config.tasks.egress,
    httpMaxResponseBytes: config.tasks.httpMaxResponseBytes,
    modelEndpoints: config.tasks.modelEndpoints,
    secrets: config.tasks.secrets,
    itemStore: config.itemStore,
    aws: config.tasks.aws,
    eventsLocal: config.tasks.eventsLocal,
  };
}

/** What the built-in task runners (HTTP, model) are told, in workers and for EXPRESS executions. */
export function runnerOptions(config: StepwiseConfig): DefaultRunnerOptions {
  return {
    egress: config.tasks.egress,
    maxResponseBytes: config.tasks.httpMaxResponseBytes,
    modelEndpoints: config.tasks.modelEndpoints,
    secrets: config.tasks.secrets,
    aws: config.tasks.aws,
  };
}
