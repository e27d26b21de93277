import { Redis } from "ioredis";

/**
 * Reaching Redis at start-up, in words a person can act on: one attempt at a
 * time, no stack traces, and a bounded wait (ioredis alone retries forever and
 * reports every attempt as an 'error' event with a stack).
 */

/** The URL as logs may show it: with any password hidden. */
export function redactRedisUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password !== "") parsed.password = "***";
    return parsed.toString();
  } catch {
    return url;
  }
}

/** Why a connection attempt failed, in a few words. */
export function describeConnectError(err: unknown): string {
  const { code, message } = (err ?? {}) as { code?: unknown; message?: unknown };
  switch (code) {
    case "ECONNREFUSED":
      return "connection refused";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "host not found";
    case "ETIMEDOUT":
      return "connection timed out";
    case "ECONNRESET":
      return "connection reset";
    default:
      return typeof message === "string" && message !== "" ? message.split("\n")[0]! : String(err);
  }
}

/** One connection and PING, without retries: undefined when Redis answers, else why not. */
export async function pingRedis(url: string, timeoutMs: number): Promise<string | undefined> {
  const redis = new Redis(url, {
    lazyConnect: true,
    retryStrategy: () => null,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    connectTimeout: timeoutMs,
    commandTimeout: timeoutMs,
    // A refused socket never reports 'close' to ioredis, which would then hold the
    // process open for this long (2 s by default) after disconnect().
    disconnectTimeout: 50,
  });
  let socketError: unknown;
  redis.on("error", (err: unknown) => {
    socketError ??= err;
  });
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (err) {
    return describeConnectError(socketError ?? err);
  } finally {
    redis.disconnect();
  }
}

/** Delay before attempt `attempt + 1`: 0.5 s, doubling, at most 5 s. */
export function retryDelayMs(attempt: number): number {
  return Math.min(500 * 2 ** Math.max(0, attempt - 1), 5000);
}

export interface ConnectAttempt {
  attempt: number;
  reason: string;
  /** When the next attempt comes; undefined when this was the last. */
  nextInMs: number | undefined;
}

/**
 * Tries `url` until it answers (true) or `timeoutMs` has passed or `signal`
 * aborts (false), reporting each failed attempt once.
 */
export async function waitForRedis(
  url: string,
  options: { timeoutMs: number; onAttempt: (a: ConnectAttempt) => void; signal?: AbortSignal },
): Promise<boolean> {
  const started = Date.now();
  for (let attempt = 1; ; attempt++) {
    const reason = await pingRedis(url, 2000);
    if (reason === undefined) return true;
    const left = options.timeoutMs - (Date.now() - started);
    if (left <= 0 || options.signal?.aborted) {
      options.onAttempt({ attempt, reason, nextInMs: undefined });
      return false;
    }
    const nextInMs = Math.min(retryDelayMs(attempt), left);
    options.onAttempt({ attempt, reason, nextInMs });
    await sleep(nextInMs, options.signal);
  }
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done(): void {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
