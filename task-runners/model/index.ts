export {
  DEFAULT_ENDPOINT,
  ENDPOINTS_ENV,
  parseEndpoints,
  type ModelEndpoint,
  type ModelEndpoints,
} from "./endpoints.js";
export { MODEL_ERRORS } from "./errors.js";
export { buildModelCall } from "./request.js";
export { normaliseCompletion, type ModelUsage } from "./response.js";
export { isModelResource, modelRunner, type ModelRunnerOptions } from "./runner.js";
export { modelFetch, type ModelFetch } from "./transport.js";
export {
  BUDGET_EXCEEDED,
  exceededLimit,
  parseBudget,
  usageOfOutput,
  type MeteredUsage,
  type ModelBudget,
} from "./budget.js";
