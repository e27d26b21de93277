/**
 * Test hook: `STEPWISE_CRASH_AT=<point>` makes this process kill itself with
 * SIGKILL the `STEPWISE_CRASH_AFTER`-th time (default 1st) it reaches the named
 * point, so integration tests can prove that a crash anywhere loses nothing.
 * Points: `beforeCommit`, `afterCommit`, `duringTask`, `afterTickStarted`; append `:child` to count
 * only transitions of child runs (Map iterations, Parallel branches), or
 * `:collect` to count only commits that collect a join's results.
 */
let target: string | undefined;
let remaining = 1;

/** Arms the crash point (config/ reads the variables); a process without it never crashes. */
export function armCrashPoint(at: string | undefined, after = 1): void {
  target = at;
  remaining = after;
}

export type CrashPoint =
  | "beforeCommit"
  | "afterCommit"
  | "duringTask"
  // A schedule's tick started its execution (created it), not yet recorded (runtime/triggers/).
  | "afterTickStarted";

export function crashPoint(point: CrashPoint, child = false, collect = false): void {
  if (target === undefined) return;
  const hit =
    target === point ||
    (child && target === `${point}:child`) ||
    (collect && target === `${point}:collect`);
  if (!hit) return;
  remaining -= 1;
  if (remaining <= 0) process.kill(process.pid, "SIGKILL");
}
