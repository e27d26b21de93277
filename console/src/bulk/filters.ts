import type { ExecutionStatus } from "../api/types.js";

/**
 * The executions list's filters and what a bulk action over them sends: pure, so
 * that "what the list shows" and "what a bulk stop acts on" are one function
 * (`listQuery`) and its rules are tested alone (test/console/bulk-filters.test.ts).
 */

/** The list's filters as the URL holds them ("" = not set). */
export interface ListFilters {
  q: string;
  stateMachine: string;
  status: string;
  error: string;
  /** A relative window (`SINCE`), "custom" for from/to, or "". */
  since: string;
  /** datetime-local values (local time, no zone). */
  from: string;
  to: string;
}

export const SINCE: Record<string, { label: string; ms: number }> = {
  "15m": { label: "Last 15 minutes", ms: 15 * 60_000 },
  "1h": { label: "Last hour", ms: 3_600_000 },
  "24h": { label: "Last 24 hours", ms: 86_400_000 },
  "7d": { label: "Last 7 days", ms: 7 * 86_400_000 },
};

/** A datetime-local value (local time, no zone) as an ISO instant; "" stays undefined. */
export function isoOf(local: string): string | undefined {
  if (!local) return undefined;
  const ms = Date.parse(local);
  return Number.isNaN(ms) ? undefined : new Date(ms).toISOString();
}

/** The filter fields of `GET /v1/executions` (and of the bulk operations' bodies). */
export type ExecutionQuery = {
  stateMachine?: string;
  status?: ExecutionStatus;
  namePrefix?: string;
  error?: string;
  startedAfter?: string;
  startedBefore?: string;
};

/** What `GET /v1/executions` is asked for these filters at `now` (ms). */
export function listQuery(f: ListFilters, now: number): ExecutionQuery {
  const since = SINCE[f.since];
  const out: ExecutionQuery = {};
  if (f.stateMachine) out.stateMachine = f.stateMachine;
  if (f.status) out.status = f.status as ExecutionStatus;
  if (f.q) out.namePrefix = f.q;
  if (f.error) out.error = f.error;
  const after = since ? new Date(now - since.ms).toISOString() : isoOf(f.from);
  const before = since ? undefined : isoOf(f.to);
  if (after !== undefined) out.startedAfter = after;
  if (before !== undefined) out.startedBefore = before;
  return out;
}

export type BulkAction = "stop" | "pause" | "resume";

/** The statuses each action changes: what its count and its request are narrowed to. */
const ACTS_ON: Record<BulkAction, readonly ExecutionStatus[]> = {
  stop: ["RUNNING", "PAUSED"],
  pause: ["RUNNING"],
  resume: ["PAUSED"],
};

/**
 * The bulk actions that can change something the list shows. None when it is
 * narrowed to an error name (an execution that runs has no error) or to ended
 * executions.
 */
export function bulkActions(f: ListFilters): BulkAction[] {
  if (f.error) return [];
  return (["stop", "pause", "resume"] as const).filter((action) =>
    f.status ? ACTS_ON[action].includes(f.status as ExecutionStatus) : true,
  );
}

/**
 * The filter a bulk action sends: the list's query, the status it acts on (the
 * list's, else RUNNING, or PAUSED for a resume) and a start bound at `now`, so an
 * execution started after the confirmation (which its count did not include) is
 * left alone. The same object counts and acts, so the two agree.
 */
export function bulkFilter(
  action: BulkAction,
  f: ListFilters,
  now: number,
): Omit<ExecutionQuery, "error"> {
  // No `error`: `bulkActions` offers nothing over a list narrowed to one, and in a
  // stop's body `error` names the error the stop records.
  const { error: _, ...query } = listQuery(f, now);
  // startedBefore is exclusive: one millisecond on, so what started at `now` is in.
  const bound = now + 1;
  const before = query.startedBefore !== undefined ? Date.parse(query.startedBefore) : Infinity;
  return {
    ...query,
    status: query.status ?? (action === "resume" ? "PAUSED" : "RUNNING"),
    startedBefore: new Date(Math.min(before, bound)).toISOString(),
  };
}

/** The filter in words, for the confirmation: every field that narrows it. */
export function describeFilter(q: ExecutionQuery, formatTime: (iso: string) => string): string {
  const parts: string[] = [];
  if (q.status) parts.push(`status ${q.status}`);
  if (q.namePrefix) parts.push(`name starts with “${q.namePrefix}”`);
  if (q.stateMachine) parts.push(`state machine ${q.stateMachine}`);
  else parts.push("any state machine");
  if (q.error) parts.push(`error ${q.error}`);
  if (q.startedAfter) parts.push(`started from ${formatTime(q.startedAfter)}`);
  if (q.startedBefore) parts.push(`started before ${formatTime(q.startedBefore)}`);
  return parts.join(", ");
}

export const VERB: Record<BulkAction, { label: string; doing: string }> = {
  stop: { label: "Stop", doing: "Stopping" },
  pause: { label: "Pause", doing: "Pausing" },
  resume: { label: "Resume", doing: "Resuming" },
};

/** "37", or "1,000+" when counting stopped at a cap. */
export function countText(count: number, more: boolean): string {
  return `${count.toLocaleString("en-US")}${more ? "+" : ""}`;
}

/** An operation's progress in words and as a fraction of what it is expected to touch. */
export function progressOf(
  op: { status: string; matched: number; done: number; skipped: number; failed: number },
  expected: number,
): { settled: number; fraction: number; finished: boolean } {
  const settled = op.done + op.skipped + op.failed;
  const finished = op.status !== "RUNNING";
  const total = finished ? Math.max(op.matched, 1) : Math.max(expected, op.matched, 1);
  return { settled, fraction: finished ? 1 : Math.min(1, settled / total), finished };
}
