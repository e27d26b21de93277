import {
  applyProcessSettings,
  ConfigError,
  loadConfig,
  processEnvironment,
  type StepwiseConfig,
} from "../config/index.js";
import { UsageError } from "./command.js";

/**
 * The configuration of `serve` and `worker`: the environment and the command's
 * flags, validated once (a bad value is a one-line usage error, exit 2, before
 * anything starts), and the process-wide settings applied.
 */
export function serviceConfig(flags: ReadonlyMap<string, string>): StepwiseConfig {
  let config: StepwiseConfig;
  try {
    config = loadConfig(processEnvironment(), flags);
  } catch (err) {
    if (err instanceof ConfigError) throw new UsageError(err.message, false);
    throw err;
  }
  applyProcessSettings(config);
  return config;
}
