import * as yaml from "yaml";

/**
 * The `yaml` package, for YAML definitions (schema/source/yaml-text.ts) and model
 * endpoint files (task-runners/model/endpoints.ts). Most processes never read YAML:
 * the built CLI bundles it apart (dist/cli/lazy-yaml.cjs) and loads it on the first
 * call (scripts/build.ts, lazyModules), so only they pay for it. Here, run from the
 * sources, it is an ordinary import.
 */
export function load(): typeof yaml {
  return yaml;
}
