import type { Retrier } from "../core/definition.js";
import type { RandomSource } from "../core/random.js";
import { errorMatches } from "./errors-match.js";

/** Defaults of the ASL spec, "Retrying after error". */
export const RETRY_DEFAULTS = { IntervalSeconds: 1, MaxAttempts: 3, BackoffRate: 2 } as const;

export type RetryDecision = { retry: true; index: number; delayMs: number } | { retry: false };

/**
 * The first retrier whose `ErrorEquals` matches decides; when its attempts are
 * spent there is no retry (later retriers are not consulted), per the ASL spec.
 * `attempts[i]` is how many retries retrier `i` made so far.
 */
export function decideRetry(
  retriers: readonly Retrier[] | undefined,
  attempts: readonly number[] | undefined,
  error: string,
  random: RandomSource,
): RetryDecision {
  if (!retriers) return { retry: false };
  const index = retriers.findIndex((r) => errorMatches(r.ErrorEquals, error));
  if (index < 0) return { retry: false };
  const retrier = retriers[index]!;
  const made = attempts?.[index] ?? 0;
  if (made >= (retrier.MaxAttempts ?? RETRY_DEFAULTS.MaxAttempts)) return { retry: false };
  return { retry: true, index, delayMs: backoffMs(retrier, made, random) };
}

/**
 * Interval before retry number `made + 1`: IntervalSeconds × BackoffRate^made, capped
 * at MaxDelaySeconds; with `JitterStrategy: FULL` a uniform draw in [0, that].
 */
export function backoffMs(retrier: Retrier, made: number, random: RandomSource): number {
  const interval = retrier.IntervalSeconds ?? RETRY_DEFAULTS.IntervalSeconds;
  const rate = retrier.BackoffRate ?? RETRY_DEFAULTS.BackoffRate;
  let seconds = interval * Math.pow(rate, made);
  if (retrier.MaxDelaySeconds !== undefined) seconds = Math.min(seconds, retrier.MaxDelaySeconds);
  if (retrier.JitterStrategy === "FULL") seconds = random.next() * seconds;
  return Math.round(seconds * 1000);
}
