/**
 * When to look again whether a parked waitForEvent's execution still runs, as a pure
 * function. An execution stopped (or ended otherwise: its timeout, a failed branch)
 * while parked cannot tell the bus, which lives in another Redis slot than the
 * commit that ends it; so the workers' loop looks (event-waits.ts `sweep`) and drops
 * the waiters of ended executions from the indexes.
 *
 * The looks back off with the waiter's age (2 s, 4 s, 8 s, … up to an hour): most
 * waits are short and ended ones leave within seconds, while 100,000 executions
 * parked for days cost one look each per hour, not one per pass.
 */

export const FIRST_CHECK_MS = 2_000;
export const MAX_CHECK_MS = 3_600_000;

/** The next look at a waiter registered at `since`, looked at `now`. */
export function nextCheckAt(since: number, now: number): number {
  const age = Math.max(0, now - since);
  return now + Math.min(MAX_CHECK_MS, Math.max(FIRST_CHECK_MS, age));
}

/** Whether an execution of this status still waits for anything. */
export function stillRuns(status: string): boolean {
  return status === "RUNNING" || status === "PAUSED";
}
