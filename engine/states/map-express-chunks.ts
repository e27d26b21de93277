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

/**
 * About how much a chunk's answer may carry. The answer is ONE event (a task result,
 * taken in by one commit and kept in the journal): 250 items of 100 KiB would make it
 * 25 MiB. Each item is held to AWS's 256 KiB by its own run (States.DataLimitExceeded).
 */
export const CHUNK_ANSWER_BYTES = 1024 * 1024;

/**
 * The size of the chunks to come, from the answer just taken in: as many items as fit
 * in `CHUNK_ANSWER_BYTES` at that answer's bytes per item (never more than `CHUNK_ITEMS`
 * nor the window, at least one). Small outputs keep chunks whole; large ones make them
 * smaller, and smaller outputs later make them grow again. Read from the answer, which
 * the journal holds: replay gives the same sizes.
 */
function fittedSize(join: Join, answer: Json, count: number): number {
  const perItem = Math.max(1, JSON.stringify(answer).length / Math.max(1, count));
  const fit = Math.max(1, Math.min(CHUNK_ITEMS, Math.floor(CHUNK_ANSWER_BYTES / perItem)));
  return join.maxConcurrency > 0 ? Math.min(fit, join.maxConcurrency) : fit;
}

/** Items per chunk under a window of `maxConcurrency` (0: none): a chunk always fits in it. */
export function chunkSize(maxConcurrency: number): number {
  return maxConcurrency > 0 ? Math.min(CHUNK_ITEMS, maxConcurrency) : CHUNK_ITEMS;
}

/** Opens the join of an EXPRESS processor: the driver keeps every input, the first chunks start. */
export function openChunks(ctx: StepContext, state: MapState, plan: JoinPlan): Join {
  const size = chunkSize(plan.maxConcurrency);
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
  // A redriven join's items not run again count as started: positions begin after them.
  const base = chunks.base ?? 0;
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
    const from = j.started - base;
    let indices: number[] | undefined;
    if (j.chunks!.indices) {
      // The Map's indices of this chunk's items, taken off the ranges still to hand out.
      indices = indicesAt(j.chunks!.indices, 0, count);
      j.chunks!.indices = dropFirst(j.chunks!.indices, count);
    }
    ctx.emit({
      type: "RunChunk",
      runId: ctx.run.runId,
      taskId: chunkTaskId(j.prefix, from),
      stateName: ctx.frame.name,
      prefix: j.prefix,
      from,
      count,
      processor: indices ? { ...processor, indices } : processor,
    });
    j.chunks!.running.push(indices ? [from, count, indices] : [from, count]);
    j.started += count;
  }
  return j;
}

/** Ranges `[first, count]` without their first `n` indices. */
function dropFirst(ranges: readonly [number, number][], n: number): [number, number][] {
  const out: [number, number][] = [];
  let left = n;
  for (const [first, count] of ranges) {
    if (left >= count) left -= count;
    else {
      out.push([first + left, count - left]);
      left = 0;
    }
  }
  return out;
}

/**
 * The Map's index of each position of a redriven join's keeping, `count` of them from
 * position 0, as it stands when its chunks first start (engine/redrive.ts reads the
 * inputs that join was given): the chunks started, in order, then the ranges left.
 */
export function positionIndices(chunks: NonNullable<Join["chunks"]>, count: number): number[] {
  const started = [...chunks.running].sort((a, b) => a[0] - b[0]);
  const out: number[] = [];
  for (const [, , indices] of started) out.push(...(indices ?? []));
  if (out.length < count && chunks.indices) {
    out.push(...indicesAt(chunks.indices, 0, count - out.length));
  }
  return out.slice(0, count);
}

/** Item indices, in order, as ranges `[first, count]` (consecutive indices share one). */
export function indexRanges(indices: readonly number[]): [number, number][] {
  const ranges: [number, number][] = [];
  for (const index of indices) {
    const last = ranges.at(-1);
    if (last && last[0] + last[1] === index) last[1] += 1;
    else ranges.push([index, 1]);
  }
  return ranges;
}

/** The Map's indices of positions `from` .. `from + count - 1` of a join's `indices`. */
export function indicesAt(
  ranges: readonly [number, number][],
  from: number,
  count: number,
): number[] {
  const out: number[] = [];
  let position = 0;
  for (const [first, n] of ranges) {
    if (out.length === count) break;
    if (position + n > from) {
      for (let k = Math.max(0, from - position); k < n && out.length < count; k++) {
        out.push(first + k);
      }
    }
    position += n;
  }
  return out;
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
  const [from, count, indices] = chunks.running[at]!;
  const outcomes = chunkOutcomes(end, count);
  // A redriven join's positions are other items of the Map (`indices`): kept as those.
  // Only successes are kept: a failed item's place collects as null all the same, and a
  // redrive (engine/redrive.ts) tells it from a success by its having no kept end.
  const outputs: [number, Json][] = [];
  outcomes.forEach((outcome, k) => {
    if (outcome.status === "SUCCEEDED") outputs.push([indices?.[k] ?? from + k, outcome.output]);
  });
  if (outputs.length > 0) {
    ctx.emit({ type: "KeepOutputs", runId: ctx.run.runId, prefix: join.prefix, outputs });
  }
  const running = chunks.running.filter((_, k) => k !== at);
  const size = end.kind === "result" ? fittedSize(join, end.output, count) : chunks.size;
  const j: Join = { ...join, chunks: { ...chunks, size, running } };
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
