/**
 * What a schedule does with its ticks, as pure functions (Temporal Schedules'
 * overlap policies and catch-up window, https://docs.temporal.io/schedule):
 *
 * - a tick older than the catch-up window when it is looked at (the service was
 *   down) is recorded as skipped, never started;
 * - a tick whose previous run is still going follows the overlap policy:
 *   `SKIP` records it as skipped; `BUFFER_ONE` keeps it (one at most; a second one
 *   meanwhile is skipped) and starts it when the running one ends; `ALLOW_ALL`
 *   starts it beside the running one; `CANCEL_OTHER` stops the running one, then
 *   starts it.
 */

export const OVERLAP_POLICIES = ["SKIP", "BUFFER_ONE", "ALLOW_ALL", "CANCEL_OTHER"] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

export type OverlapDecision = "start" | "skip" | "buffer" | "cancel-then-start";

/** What to do with a tick that is due now. */
export function decideOverlap(
  policy: OverlapPolicy,
  state: { previousRunning: boolean; buffered: boolean },
): OverlapDecision {
  if (!state.previousRunning) return "start";
  switch (policy) {
    case "SKIP":
      return "skip";
    case "BUFFER_ONE":
      return state.buffered ? "skip" : "buffer";
    case "ALLOW_ALL":
      return "start";
    case "CANCEL_OTHER":
      return "cancel-then-start";
  }
}

/** Due ticks split into those within the catch-up window (to run) and those missed. */
export function catchUp(
  ticks: readonly number[],
  nowMs: number,
  windowMs: number,
): { due: number[]; missed: number[] } {
  const due: number[] = [];
  const missed: number[] = [];
  for (const tick of ticks) (nowMs - tick > windowMs ? missed : due).push(tick);
  return { due, missed };
}
