import type { ChunkProcessor, Effect } from "../../engine/core/effects.js";
import type { RunState } from "../../engine/core/run.js";
import type { CalledTaskRecord } from "../commit/effects.js";
import { valueTemplate } from "../store/event-template.js";
import { shortId } from "../store/ids.js";
import type { CommitOp } from "../store/scripts/commit-transition.js";
import type { Json } from "../../engine/core/json.js";
import { runChunkItems } from "../../engine/drivers/express-chunk.js";
import { EXPRESS_CHUNK_RESOURCE } from "../../engine/states/map-express-chunk-ids.js";
import type { TaskRequest, TaskRunner } from "../../task-runners/runner.js";
import { EXPRESS_LIMIT_MS, runnerHandlers } from "../executions/express.js";

/** What a chunk's task record holds as its input (`chunkTaskOp`). */
interface ChunkRequest {
  processor: ChunkProcessor;
  from: number;
  inputs: Json[];
}

/**
 * A Distributed Map's EXPRESS chunk, at the edge: its items run here, in memory, as
 * Express executions on the in-memory driver (engine/drivers/express-chunk.ts), with
 * the worker's own runners for their tasks, on the real clock. The answer, every
 * item's outcome, is the chunk task's result: the Map takes them in with ONE commit.
 * A worker that dies mid-chunk leaves the task's claim to run out; the chunk then runs
 * again, whole (at least once, as AWS runs Express children), and only one answer
 * is ever delivered (the task record fences it).
 */
export function expressChunkRunner(runners: () => readonly TaskRunner[]): TaskRunner {
  return {
    name: "map-express-chunk",
    handles: (resource) => resource === EXPRESS_CHUNK_RESOURCE,
    async run(request: TaskRequest): Promise<Json> {
      const { processor, from, inputs } = request.input as unknown as ChunkRequest;
      const result = await runChunkItems(processor, from, inputs, {
        clock: "real",
        tasks: runnerHandlers(runners()),
        limitMs: EXPRESS_LIMIT_MS,
      });
      return result as unknown as Json;
    },
  };
}

/**
 * The `RunChunk` effect as a commit op (commit/effects.ts): a called task of the Map
 * state's own, whose record gets the items' inputs from the window's keeping inside
 * the commit (`chunkTask`), so the record alone is what a redelivered call needs.
 */
export function chunkTaskOp(
  effect: Extract<Effect, { type: "RunChunk" }>,
  run: RunState,
  now: number,
): CommitOp {
  const record = (inputs: unknown): CalledTaskRecord => {
    const called: CalledTaskRecord = {
      resource: EXPRESS_CHUNK_RESOURCE,
      stateName: effect.stateName,
      input: {
        processor: effect.processor as unknown as Json,
        from: effect.from,
        inputs: inputs as Json,
      },
      attempt: 0,
      operationKey: effect.taskId,
      mode: "call",
      at: now,
    };
    if (run.current) called.enteredEventId = run.current.enteredEventId;
    return called;
  };
  return {
    op: "chunkTask",
    task: shortId(effect.taskId),
    record: valueTemplate(record),
    join: shortId(effect.prefix),
    from: effect.from,
    count: effect.count,
  };
}
