export { awsRunner, isAwsIntegration, type AwsRunner, type AwsRunnerOptions } from "./runner.js";
export { AWS_ENDPOINT_PREFIX, parseAwsEndpoints } from "./config.js";
export { parseAwsResource, type AwsResource } from "./resources.js";
export { awsService, commandName, type AwsService } from "./services.js";
export { quietNodeVersionWarning } from "./clients.js";
export {
  isDefaultBus,
  localEntryId,
  type LocalEventEntry,
  type LocalEventResult,
  type PublishLocal,
} from "./local-events.js";
