import { armCrashPoint } from "../runtime/worker/crash.js";
import { setStorageFormat } from "../runtime/store/codec.js";
import { setDeploymentIdentity } from "../runtime/store/ids.js";
import type { StepwiseConfig } from "./load.js";
import type { Environment } from "./values.js";

export {
  loadClientConfig,
  loadConfig,
  LOG_LEVELS,
  type ClientConfig,
  type Flags,
  type LogLevel,
  type StepwiseConfig,
} from "./load.js";
export { ConfigError, type Environment } from "./values.js";
export { VARIABLES, type Variable } from "./variables.js";
export { describeConfig } from "./describe.js";

/**
 * The process's environment, copied once. This is the one place in Stepwise that
 * reads `process.env` (a test holds it so): everything else is handed its settings.
 */
export function processEnvironment(): Environment {
  return Object.freeze({ ...process.env });
}

/**
 * Settings that hold for the whole process rather than for one object: the ARNs'
 * region and account, the storage format, an armed crash point. Set once, before
 * anything is served.
 */
export function applyProcessSettings(config: StepwiseConfig): void {
  setDeploymentIdentity(config.deployment.region, config.deployment.account);
  setStorageFormat(config.deployment.storage);
  armCrashPoint(config.crash?.at, config.crash?.after);
}
