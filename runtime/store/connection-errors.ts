import type { Redis } from "ioredis";

/**
 * Redis connection errors, logged without flooding. ioredis retries by itself and
 * commands wait meanwhile, so an error is not a failure of anything in flight; but
 * an outage nobody hears of is worse than a noisy one (issue 13: they were
 * swallowed). Per connection: the first error at once, then at most one line per
 * `intervalMs` saying how many were left out, and one line when it is back.
 */
export type ConnectionLog = (
  level: "warn" | "info",
  message: string,
  fields: Record<string, unknown>,
) => void;

const stderrLog: ConnectionLog = (level, message) =>
  process.stderr.write(`stepwise ${level}: ${message}\n`);

let sink: ConnectionLog = stderrLog;

/** Where connection errors go (serve and worker pass their pino logger). */
export function setConnectionLog(log: ConnectionLog): void {
  sink = log;
}

export function logConnectionErrors(redis: Redis, name: string, intervalMs = 10_000): void {
  let lastAt = -Infinity;
  let suppressed = 0;
  let failing = false;
  redis.on("error", (err: Error) => {
    failing = true;
    const now = Date.now();
    if (now - lastAt < intervalMs) {
      suppressed++;
      return;
    }
    const more = suppressed > 0 ? ` (${suppressed} more since the last line)` : "";
    sink("warn", `Redis connection '${name}': ${err.message}; retrying${more}`, {
      connection: name,
      error: err.message,
      suppressed,
    });
    lastAt = now;
    suppressed = 0;
  });
  redis.on("ready", () => {
    if (!failing) return;
    failing = false;
    sink("info", `Redis connection '${name}' is back`, { connection: name });
  });
}

/** Error codes of a Redis that cannot be reached (node's socket errors and ioredis's own). */
const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ENOTFOUND",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "EPIPE",
  "ENETUNREACH",
  "EAI_AGAIN",
]);

/** Whether an error says Redis cannot be reached (rather than that something went wrong). */
export function isConnectionError(err: unknown): boolean {
  if (!(err instanceof Error)) return false;
  const code = (err as NodeJS.ErrnoException).code;
  if (code !== undefined && UNREACHABLE.has(code)) return true;
  return /^(Connection is closed|Stream isn't writeable|connect E[A-Z]+)/.test(err.message);
}

/**
 * A worker's errors during a Redis outage: every BullMQ worker and poller reports
 * each failed attempt (tens of thousands of lines in a minute, issue 44). Passed
 * through this, connection errors make one line at once and then one per
 * `intervalMs` with how many there were; other errors go to `onError` as they come.
 */
export function summarizeOutages(
  onError: (err: unknown) => void,
  intervalMs = 10_000,
): (err: unknown) => void {
  let lastAt = -Infinity;
  let suppressed = 0;
  return (err) => {
    if (!isConnectionError(err)) return onError(err);
    const now = Date.now();
    if (now - lastAt < intervalMs) {
      suppressed++;
      return;
    }
    const message = (err as Error).message;
    sink(
      "warn",
      `Redis cannot be reached (${message}); the worker retries${suppressed > 0 ? ` (${suppressed} more such errors since the last line)` : ""}`,
      { error: message, suppressed },
    );
    lastAt = now;
    suppressed = 0;
  };
}
