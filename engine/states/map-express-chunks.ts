import type { MapState } from "../core/definition.js";
import type { ChunkProcessor } from "../core/effects.js";
import type { Json, JsonObject } from "../core/json.js";
import type { Join } from "../core/run.js";
import {
  exceedsTolerance,
  newJoin,
  stopRunning,
  type JoinPlan,
  type JoinVerdict,
} from "../flow/join.js";
import type { StepContext } from "../step-context.js";
import { chunkTaskId, EXPRESS_CHUNK_RESOURCE } from "./map-express-chunk-ids.js";

/**
 * A Distributed Map whose ItemProcessor has `ExecutionType: EXPRESS` runs its items
 * as AWS runs Express children: in memory, without a history of their own, at least
 * once. The join hands them out in chunks: each chunk is ONE task of the Map state's
 * own (the `RunChunk` effect; the driver runs its items and answers with all their
 * outcomes at once), so a chunk of a few hundred items costs the join one
 * transition instead of several per item. The join's counters, window
 * (`MaxConcurrency`), tolerance, UpdateMapRun and stop are those of any Map; the
 * outputs go to the driver (`KeepOutputs`) as child runs' do, and are collected the
 * same way when every item ended.
 */

/** Items per chunk: big enough that a chunk's commit is cheap per item, small enough to redo. */
export const CHUNK_ITEMS = 250;

/** Without MaxConcurrency ("as many as the deployment can run"): items in flight at once. */
export const UNBOUNDED_WINDOW = 4000;

/** At most this many chunks start in one step (the rest with `ContinueJoin`), as SPAWN_BATCH. */
export const CHUNKS_PER_STEP = 40;

/** How one item of a chunk ended; its output, if it succeeded, goes to the driver's keeping. */
export type ItemOutcome =
  | { status: "SUCCEEDED"; output: Json }
  | { status: "FAILED"; error?: string; cause?: string }
  | { status: "ABORTED" };

/** A chunk task's result: one outcome per item, in item order. */
export interface ChunkResult {
  outcomes: ItemOutcome[];
}

/** How a chunk task answered: with its result, or failed as a whole (no runner, a broken answer). */
export type ChunkEnd =
  { kind: "result"; output: Json } | { kind: "failed"; error: string; cause?: string };

/** The Map's ItemProcessor as a state machine of its own, with the query language it inherits. */
export function processorOf(ctx: StepContext, state: MapState): ChunkProcessor {
  const { ProcessorConfig: _, ...scope } = (state.ItemProcessor ?? state.Iterator)!;
  const definition = {
    ...scope,
    QueryLanguage: scope.QueryLanguage ?? ctx.program.queryLanguage,
  } as unknown as Json;
  const processor: ChunkProcessor = { definition };
  if (ctx.frame.mapRunArn !== undefined) processor.mapRunArn = ctx.frame.mapRunArn;
  return processor;
}

/** Opens the join of an EXPRESS processor: the driver keeps every input, the first chunks start. */
export function openChunks(ctx: StepContext, state: MapState, plan: JoinPlan): Join {
  const size = plan.maxConcurrency > 0 ? Math.min(CHUNK_ITEMS, plan.maxConcurrency) : CHUNK_ITEMS;
  const join: Join = { ...newJoin(ctx, plan), chunks: { size, running: [] } };
  if (join.total > 0) {
    ctx.emit({
      type: "KeepInputs",
      runId: ctx.run.runId,
      prefix: join.prefix,
      from: 0,
      inputs: plan.inputs,
    });
  }
  return startChunks(ctx, state, join);
}

/**
 * Starts chunks while the window has room for a whole one (a chunk is never
 * bigger than the window, so one always fits when none runs), at most
 * `CHUNKS_PER_STEP`, and asks for another step while room is left.
 */
export function startChunks(ctx: StepContext, state: MapState, join: Join): Join {
  const chunks = join.chunks!;
  const limit = join.maxConcurrency > 0 ? join.maxConcurrency : UNBOUNDED_WINDOW;
  const j: Join = { ...join, chunks: { ...chunks, running: [...chunks.running] } };
  let processor: ChunkProcessor | undefined;
  for (let started = 0; ; started++) {
    const running = j.started - j.succeeded - j.failed;
    const count = Math.min(chunks.size, limit, j.total - j.started);
    if (count <= 0 || limit - running < count) break;
    if (started === CHUNKS_PER_STEP) {
      ctx.emit({ type: "ContinueJoin", runId: ctx.run.runId, prefix: j.prefix });
      break;
    }
    processor ??= processorOf(ctx, state);
    ctx.emit({
      type: "RunChunk",
      runId: ctx.run.runId,
      taskId: chunkTaskId(j.prefix, j.started),
      stateName: ctx.frame.name,
      prefix: j.prefix,
      from: j.started,
      count,
      processor,
    });
    j.chunks!.running.push([j.started, count]);
    j.started += count;
  }
  return j;
}

/** The chunk's outcomes, `count` of them; a malformed answer fails every item of it. */
export function chunkOutcomes(end: ChunkEnd, count: number): ItemOutcome[] {
  const failAll = (error: string, cause?: string): ItemOutcome[] =>
    Array.from({ length: count }, () =>
      cause === undefined ? { status: "FAILED", error } : { status: "FAILED", error, cause },
    );
  if (end.kind === "failed") return failAll(end.error, end.cause);
  const outcomes = (end.output as JsonObject | null)?.outcomes;
  if (!Array.isArray(outcomes) || outcomes.length !== count) {
    return failAll("States.Runtime", `A chunk of ${count} items answered without their outcomes.`);
  }
  return outcomes as unknown as ItemOutcome[];
}

/** How many items of a chunk's answer succeeded and failed (DescribeMapRun's counts). */
export function tallyChunk(join: Join, taskId: string, end: ChunkEnd) {
  const chunk = join.chunks?.running.find(([from]) => chunkTaskId(join.prefix, from) === taskId);
  if (!chunk) return { succeeded: 0, failed: 0 };
  let succeeded = 0;
  for (const outcome of chunkOutcomes(end, chunk[1]))
    if (outcome.status === "SUCCEEDED") succeeded++;
  return { succeeded, failed: chunk[1] - succeeded };
}

/**
 * Takes in one chunk's end: its outputs go to the driver (`KeepOutputs`), its
 * counts to the join, once (a chunk not running is stale: a redelivery, or a result
 * that arrived after a stop). Tolerance is judged on the chunk as a whole: a chunk
 * that takes the failures past it fails the Map with its first failure.
 */
export function applyChunkEnded(
  ctx: StepContext,
  state: MapState,
  join: Join,
  taskId: string,
  end: ChunkEnd,
): { join: Join; verdict: JoinVerdict } {
  const chunks = join.chunks;
  const at = chunks?.running.findIndex(([from]) => chunkTaskId(join.prefix, from) === taskId);
  if (!chunks || at === undefined || at < 0) return { join, verdict: { kind: "pending" } };
  const [from, count] = chunks.running[at]!;
  const outcomes = chunkOutcomes(end, count);
  // Only successes are kept: a failed item's place collects as null all the same, and a
  // redrive (engine/redrive.ts) tells it from a success by its having no kept end.
  const outputs: [number, Json][] = [];
  outcomes.forEach((outcome, k) => {
    if (outcome.status === "SUCCEEDED") outputs.push([from + k, outcome.output]);
  });
  if (outputs.length > 0) {
    ctx.emit({ type: "KeepOutputs", runId: ctx.run.runId, prefix: join.prefix, outputs });
  }
  const running = chunks.running.filter((_, k) => k !== at);
  const j: Join = { ...join, chunks: { ...chunks, running } };
  const failures = outcomes.filter((o) => o.status !== "SUCCEEDED");
  j.succeeded += count - failures.length;
  j.failed += failures.length;
  if (failures.length > 0) {
    const tolerated =
      j.toleratedFailureCount !== undefined || j.toleratedFailurePercentage !== undefined;
    if (!tolerated || exceedsTolerance(j)) {
      stopRunning(ctx, j);
      const verdict: JoinVerdict = { kind: "failed", exceededTolerance: tolerated };
      const first = failures[0]!;
      if (first.status === "FAILED") {
        if (first.error !== undefined) verdict.error = first.error;
        if (first.cause !== undefined) verdict.cause = first.cause;
      }
      return { join: j, verdict };
    }
  }
  if (j.succeeded + j.failed === j.total) return { join: j, verdict: { kind: "complete" } };
  return { join: startChunks(ctx, state, j), verdict: { kind: "pending" } };
}

export { EXPRESS_CHUNK_RESOURCE };
