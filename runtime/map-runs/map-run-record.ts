import type { RunEvent } from "../../engine/core/events.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { RunState } from "../../engine/core/run.js";
import { mapRunId } from "../../engine/states/map-io-resources.js";
import { tallyChunk, type ChunkEnd } from "../../engine/states/map-express-chunks.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";

/**
 * A Map Run's record (AWS DescribeMapRun), a hash per Map Run in its execution's
 * shard, `mr:<map run id>`, and the execution's Map Runs in order of start,
 * `mrx:<execution>` (a sorted set by start time). The source of truth stays the
 * parent's run (its join's counters) and history (MapRun* events); the record is
 * their view for the API, written by the worker AHEAD of each commit that changes
 * it, on the same connection as the commit (no extra round trip). A commit that
 * loses its race is stepped again and writes the record again; one that never
 * happens (a crash) is stepped again by the redelivered job, which writes it as
 * it commits. So the record never lags a committed state, and may lead it by the
 * one transition in flight.
 *
 * Its item counters are written when the Map Run opens, when its configuration
 * changes (UpdateMapRun) and when its children are done, NOT at each child's end:
 * that was one more HSET, and one more socket write, per item on the Map's run,
 * whose commits are serial (about 7% of the worker's CPU in a 10,000-item run).
 * While the record says RUNNING, readers take the counters from the run's state
 * itself (`liveCounts`, map-run-store.ts), which they were copied from.
 */
export const MAP_RUN_KIND = "mr:";
export const MAP_RUN_INDEX_KIND = "mrx:";

export function mapRunKey(keys: Pick<Keys, "base">, id: string): string {
  return `${keys.base}${MAP_RUN_KIND}${id}`;
}

export function mapRunIndexKey(keys: Pick<Keys, "base">, execution: string): string {
  return `${keys.base}${MAP_RUN_INDEX_KIND}${execution}`;
}

/** The fields of the record (all strings in the hash). */
export interface MapRunFields {
  arn: string;
  /** The execution (short id) and the run (short id) whose Map state runs it. */
  execution: string;
  run: string;
  state: string;
  status: "RUNNING" | "SUCCEEDED" | "FAILED" | "ABORTED";
  startDate: string;
  stopDate: string;
  total: number;
  started: number;
  succeeded: number;
  failed: number;
  aborted: number;
  maxConcurrency: number;
  /** "" when not set. */
  toleratedFailureCount: number | "";
  toleratedFailurePercentage: number | "";
  error: string;
  cause: string;
  /** Redriven with its parent (MapRunRedriven): how many times, and when last ("" before). */
  redriveCount: number;
  redriveDate: string;
}

type Write = {
  id: string;
  fields: Partial<MapRunFields>;
  index?: { execution: string; at: number };
};

/** What one step changed of a Map Run, if anything. */
function stepWrites(
  run: string,
  before: RunState,
  after: RunState,
  event: RunEvent,
  history: HistoryEvent[],
): Write[] {
  const writes: Write[] = [];
  const frame = after.status === "RUNNING" ? after.current : undefined;
  const prior = before.current;
  for (const e of history) {
    const details = e as unknown as Record<string, Record<string, string> | undefined>;
    if (e.type === "MapRunStarted") {
      const arn = details.mapRunStartedEventDetails!.mapRunArn!;
      const exec = run.split("/")[0]!;
      writes.push({
        id: mapRunId(arn),
        fields: {
          arn,
          execution: exec,
          run,
          state: frame?.name ?? prior?.name ?? "",
          status: "RUNNING",
          startDate: e.timestamp,
        },
        index: { execution: exec, at: Date.parse(e.timestamp) },
      });
    } else if (e.type === "MapRunRedriven") {
      writes.push(redrivenWrite(run, e, details));
    } else if (
      (e.type === "MapRunSucceeded" || e.type === "MapRunFailed" || e.type === "MapRunAborted") &&
      prior?.mapRunArn !== undefined
    ) {
      writes.push({ id: mapRunId(prior.mapRunArn), fields: endFields(prior, event, e, details) });
    }
  }
  const counts = countWrite(frame);
  if (counts && !onlyCountersMoved(prior, frame)) writes.push(counts);
  return writes;
}

/**
 * Redriven with its parent: the same Map Run runs again (its counters follow from
 * the redriven join), under the run that now holds it (a nested Map's run is
 * renamed by the redrive).
 */
function redrivenWrite(
  run: string,
  e: HistoryEvent,
  details: Record<string, Record<string, string> | undefined>,
): Write {
  const redriven = details.mapRunRedrivenEventDetails as unknown as {
    mapRunArn: string;
    redriveCount: number;
  };
  return {
    id: mapRunId(redriven.mapRunArn),
    fields: {
      run,
      status: "RUNNING",
      stopDate: "",
      error: "",
      cause: "",
      redriveCount: redriven.redriveCount,
      redriveDate: e.timestamp,
    },
  };
}

/** The record's fields at the Map Run's end: status, stop date, failure, final counts. */
function endFields(
  prior: NonNullable<RunState["current"]>,
  event: RunEvent,
  e: HistoryEvent,
  details: Record<string, Record<string, string> | undefined>,
): Partial<MapRunFields> {
  const status =
    e.type === "MapRunSucceeded" ? "SUCCEEDED" : e.type === "MapRunFailed" ? "FAILED" : "ABORTED";
  const fields: Partial<MapRunFields> = { status, stopDate: e.timestamp };
  const failure = details.mapRunFailedEventDetails;
  if (failure?.error !== undefined) fields.error = failure.error;
  if (failure?.cause !== undefined) fields.cause = failure.cause;
  const phase = prior.phase;
  if (phase.kind !== "children") return fields;
  const join = phase.join;
  let { succeeded, failed } = join;
  let stopped = join.aborted ?? 0;
  // The child whose end decided the Map Run is not in the join before it.
  if (event.type === "ChildEnded") {
    if (event.outcome.status === "SUCCEEDED") succeeded += 1;
    else failed += 1;
    if (event.outcome.status === "ABORTED") stopped += 1;
  } else if (join.chunks && (event.type === "TaskSucceeded" || event.type === "TaskFailed")) {
    // Or the chunk of EXPRESS items whose end decided it.
    const end: ChunkEnd =
      event.type === "TaskSucceeded"
        ? { kind: "result", output: event.output }
        : { kind: "failed", error: event.error };
    const tally = tallyChunk(join, event.taskId, end);
    succeeded += tally.succeeded;
    failed += tally.failed;
  }
  fields.succeeded = succeeded;
  fields.failed = failed - stopped;
  // Stopped: the children still running were aborted, those not started too (and
  // those stopped one by one before).
  fields.aborted = join.total - succeeded - fields.failed;
  return fields;
}

/**
 * The step left the Map Run's join open with the same configuration (a child's end,
 * the window refilled, a chunk of EXPRESS items done): only its counters moved,
 * which readers of a running Map Run take from the run (`liveCounts`).
 */
function onlyCountersMoved(prior: RunState["current"], frame: RunState["current"]): boolean {
  if (prior?.phase.kind !== "children" || frame?.phase.kind !== "children") return false;
  if (prior.mapRunArn !== frame.mapRunArn) return false;
  const a = prior.phase.join;
  const b = frame.phase.join;
  return (
    a.prefix === b.prefix &&
    a.total === b.total &&
    a.maxConcurrency === b.maxConcurrency &&
    a.toleratedFailureCount === b.toleratedFailureCount &&
    a.toleratedFailurePercentage === b.toleratedFailurePercentage
  );
}

/** The item counters of a running Map Run, from the state of the run whose Map runs it. */
export type LiveCounts = Pick<
  MapRunFields,
  "total" | "started" | "succeeded" | "failed" | "aborted"
>;

/**
 * The counters of the Map Run `arn` as the run's state has them, or undefined when
 * the run does not wait on it (not opened yet: its ItemReader still reads; or over).
 */
export function liveCounts(state: RunState, arn: string): LiveCounts | undefined {
  const frame = state.status === "RUNNING" ? state.current : undefined;
  if (frame?.mapRunArn !== arn) return undefined;
  const fields = countWrite(frame)?.fields;
  if (fields?.total === undefined) return undefined;
  const { total, started = 0, succeeded = 0, failed = 0, aborted = 0 } = fields;
  return { total, started, succeeded, failed, aborted };
}

/** The counters of the Map Run the run's state waits on, if it waits on one. */
function countWrite(frame: RunState["current"]): Write | undefined {
  const arn = frame?.mapRunArn;
  if (arn === undefined || !frame) return undefined;
  const phase = frame.phase;
  if (phase.kind === "children") {
    const join = phase.join;
    return {
      id: mapRunId(arn),
      fields: {
        total: join.total,
        started: join.started,
        succeeded: join.succeeded,
        // A child stopped by its own StopExecution failed the join, but AWS counts it aborted.
        failed: join.failed - (join.aborted ?? 0),
        aborted: join.aborted ?? 0,
        maxConcurrency: join.maxConcurrency,
        toleratedFailureCount: join.toleratedFailureCount ?? "",
        toleratedFailurePercentage: join.toleratedFailurePercentage ?? "",
      },
    };
  }
  if (phase.kind !== "collecting") return undefined;
  const failed = phase.failed ?? 0;
  const aborted = phase.aborted ?? 0;
  return {
    id: mapRunId(arn),
    fields: {
      total: phase.total,
      started: phase.total,
      succeeded: phase.total - failed,
      failed: failed - aborted,
      aborted,
    },
  };
}

/**
 * Sends the Map Run records a commit's steps change, ahead of the commit on the
 * same connection (see above). Nothing is sent for the steps of a run that
 * holds no Map Run, which is almost every step.
 */
export function writeMapRuns(
  client: RedisClient,
  keys: Pick<Keys, "base">,
  run: string,
  steps: readonly {
    before: RunState;
    event: RunEvent;
    result: { run: RunState; history: HistoryEvent[] };
  }[],
): void {
  let writes: Write[] | undefined;
  for (const s of steps) {
    if (s.before.current?.mapRunArn === undefined && !hasMapRunStart(s.result.history)) continue;
    (writes ??= []).push(...stepWrites(run, s.before, s.result.run, s.event, s.result.history));
  }
  if (!writes || writes.length === 0) return;
  const pipeline = client.redis.pipeline();
  for (const write of writes) {
    const flat: string[] = [];
    for (const [k, v] of Object.entries(write.fields)) flat.push(k, String(v));
    if (flat.length > 0) pipeline.hset(mapRunKey(keys, write.id), ...flat);
    if (write.index) {
      pipeline.zadd(mapRunIndexKey(keys, write.index.execution), write.index.at, write.id);
    }
  }
  pipeline.exec().catch(() => {});
}

function hasMapRunStart(history: readonly HistoryEvent[]): boolean {
  for (const e of history)
    if (e.type === "MapRunStarted" || e.type === "MapRunRedriven") return true;
  return false;
}
