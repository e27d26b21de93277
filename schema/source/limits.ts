/**
 * Limits on what the validator reads. AWS caps a definition at 1 MiB ("Quotas":
 * maximum request size / definition size), so anything larger is refused before it
 * is parsed. Nesting is capped far below what a recursive parser or ajv could
 * overflow on, and far above any real definition (a state machine nested five
 * Parallels deep with a deep payload stays under 60 levels).
 */
export const MAX_DEFINITION_BYTES = 1024 * 1024;
export const MAX_NESTING_DEPTH = 200;
/** YAML anchors may be reused (a shared Retry policy), but not exponentially. */
export const MAX_YAML_ALIASES = 100;
/** Stop collecting source problems after this many; one is usually enough to fix first. */
export const MAX_SOURCE_DIAGNOSTICS = 20;
