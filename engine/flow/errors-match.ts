/**
 * How an error name matches a retrier's or catcher's `ErrorEquals` (ASL spec,
 * "Error names"; AWS "Error handling in Step Functions"):
 * - `States.ALL` matches any error except `States.Runtime`;
 * - `States.TaskFailed` matches any error except `States.Timeout` and `States.Runtime`;
 * - `States.Runtime` is terminal: recorded AWS executions show that not even a catcher
 *   naming it explicitly catches it. (`States.DataLimitExceeded` raised by a task *is*
 *   caught by `States.ALL` in AWS's recordings, despite what the documentation says.)
 */
const TERMINAL = new Set(["States.Runtime"]);

export function errorMatches(errorEquals: readonly string[], error: string): boolean {
  if (TERMINAL.has(error)) return false;
  for (const name of errorEquals) {
    if (name === error) return true;
    if (name === "States.ALL") return true;
    if (name === "States.TaskFailed" && error !== "States.Timeout") return true;
  }
  return false;
}
