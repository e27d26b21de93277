import { apiError, type ApiError } from "./errors.js";

/**
 * Admission control for starts (issue 13: 64 clients started 174,715 executions in
 * 60 s and none was refused). Two checks, before anything is written, so an
 * accepted start is never dropped and a refused one left nothing behind:
 *
 * - a token bucket per API key and one per state machine (AWS throttles
 *   StartExecution the same way, with a bucket of 1,300 refilled at 300 per second
 *   in its largest regions, which are the defaults here);
 * - the backlog: transitions waiting for a worker. Above `maxBacklog` the workers
 *   are behind, and a start is refused until they catch up.
 *
 * Refusals answer 429 `ThrottlingException` with `Retry-After`. The buckets live
 * in the API process: N API processes admit N times the rate.
 */
export interface AdmissionSettings {
  /** Starts per second refilled in each bucket; 0 turns the buckets off. */
  rate: number;
  /** Bucket size: the burst a quiet key or machine may start at once. */
  burst: number;
  /** Waiting transitions above which starts are refused; 0 turns the check off. */
  maxBacklog: number;
}

export const DEFAULT_ADMISSION: AdmissionSettings = { rate: 300, burst: 1300, maxBacklog: 100_000 };

/** A token bucket; pure but for the instants it is given. */
export class TokenBucket {
  private tokens: number;
  private at: number;

  constructor(
    private readonly rate: number,
    private readonly burst: number,
    now: number,
  ) {
    this.tokens = burst;
    this.at = now;
  }

  /** Milliseconds until a token is there (0: one is there now). */
  wait(now: number): number {
    this.refill(now);
    return this.tokens >= 1 ? 0 : Math.ceil(((1 - this.tokens) / this.rate) * 1000);
  }

  take(now: number): void {
    this.refill(now);
    this.tokens -= 1;
  }

  /** Full again: nothing to remember. */
  full(now: number): boolean {
    this.refill(now);
    return this.tokens >= this.burst;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.at) / 1000) * this.rate);
    this.at = now;
  }
}

/** How often the backlog is read from Redis at most: starts share one read. */
const BACKLOG_TTL_MS = 500;
/** Buckets kept at most; full ones are forgotten first (a full bucket is a new one). */
const MAX_BUCKETS = 50_000;

export class Admission {
  private readonly buckets = new Map<string, TokenBucket>();
  private backlogRead: { at: number; value: Promise<number> } | undefined;

  constructor(
    private readonly settings: AdmissionSettings,
    /** Transitions waiting for a worker (RedisRuntime.backlog). */
    private readonly backlog?: () => Promise<number>,
    private readonly clock: () => number = Date.now,
  ) {}

  /** Throws 429 ThrottlingException (with `retryAfterSeconds`) or admits one start. */
  async admit(caller: string | undefined, machine: string): Promise<void> {
    const { maxBacklog, rate } = this.settings;
    if (maxBacklog > 0 && this.backlog) {
      const waiting = await this.readBacklog();
      if (waiting > maxBacklog) {
        throw throttled(
          `${waiting} transitions wait for a worker (STEPWISE_MAX_BACKLOG ${maxBacklog})`,
          1,
        );
      }
    }
    if (rate <= 0) return;
    const now = this.clock();
    const keys = [`key ${caller ?? "(no key)"}`, `state machine ${machine}`];
    const buckets = keys.map((k) => this.bucket(k, now));
    // Both are checked before either is taken from: a refusal costs no token.
    for (const [i, bucket] of buckets.entries()) {
      const ms = bucket.wait(now);
      if (ms > 0) {
        throw throttled(
          `more than ${rate} starts per second (burst ${this.settings.burst}) for ${keys[i]} (STEPWISE_START_RATE, STEPWISE_START_BURST)`,
          Math.ceil(ms / 1000),
        );
      }
    }
    for (const bucket of buckets) bucket.take(now);
  }

  private bucket(key: string, now: number): TokenBucket {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= MAX_BUCKETS) this.forgetFull(now);
      bucket = new TokenBucket(this.settings.rate, this.settings.burst, now);
      this.buckets.set(key, bucket);
    }
    return bucket;
  }

  private forgetFull(now: number): void {
    for (const [key, bucket] of this.buckets) if (bucket.full(now)) this.buckets.delete(key);
    // Still full of busy buckets: forget the oldest, which at worst gives one a burst again.
    if (this.buckets.size >= MAX_BUCKETS) {
      const oldest = this.buckets.keys().next().value;
      if (oldest !== undefined) this.buckets.delete(oldest);
    }
  }

  private readBacklog(): Promise<number> {
    const now = this.clock();
    if (!this.backlogRead || now - this.backlogRead.at > BACKLOG_TTL_MS) {
      const value = this.backlog!().catch(() => 0);
      this.backlogRead = { at: now, value };
    }
    return this.backlogRead.value;
  }
}

/** The refusal; `retryAfterSeconds` goes into the Retry-After header. */
export function throttled(
  reason: string,
  retryAfterSeconds: number,
): ApiError & { retryAfterSeconds: number } {
  const error = apiError("ThrottlingException", { reason, retryAfter: retryAfterSeconds });
  return Object.assign(error, { retryAfterSeconds: Math.max(1, retryAfterSeconds) });
}
