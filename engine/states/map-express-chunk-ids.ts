import type { MapState } from "../core/definition.js";
import type { Join } from "../core/run.js";

/**
 * The names of a Distributed Map's EXPRESS chunks (map-express-chunks.ts), apart so
 * that the join (flow/join.ts) can cancel them without importing the Map.
 */

/** The internal resource a chunk's task record names (runtime/map-runs/express-chunks.ts serves it). */
export const EXPRESS_CHUNK_RESOURCE = "stepwise:internal:map-express-chunk";

/** `ExecutionType: EXPRESS` in a DISTRIBUTED Map's ProcessorConfig (or its legacy Iterator's). */
export function isExpressProcessor(state: MapState): boolean {
  const config = (state.ItemProcessor ?? state.Iterator)?.ProcessorConfig;
  return config?.Mode === "DISTRIBUTED" && config.ExecutionType === "EXPRESS";
}

/**
 * The task id of the chunk of join `prefix` (`<run>/<serial>`) starting at item
 * `from`: `<run>#<serial>.c<from>`. A task id names its run before its `#` (the
 * driver delivers the answer there: the Map's run); deterministic, so a
 * redelivered step names the same task.
 */
export function chunkTaskId(prefix: string, from: number): string {
  const slash = prefix.lastIndexOf("/");
  return `${prefix.slice(0, slash)}#${prefix.slice(slash + 1)}.c${from}`;
}

/** The join (`<run>/<serial>`) a chunk's task id names (the inverse of `chunkTaskId`), if it is one. */
export function joinOfChunk(taskId: string): string | undefined {
  const match = /^(.*)#(\d+)\.c\d+$/.exec(taskId);
  return match ? `${match[1]}/${match[2]}` : undefined;
}

/** The first item of the chunk a task id names, if it is one of the join `prefix`'s. */
export function chunkOf(prefix: string, taskId: string): number | undefined {
  const head = chunkTaskId(prefix, 0).slice(0, -1);
  if (!taskId.startsWith(head)) return undefined;
  const from = Number(taskId.slice(head.length));
  return Number.isInteger(from) && from >= 0 ? from : undefined;
}

/** Whether `taskId` names a chunk of `join` still in flight (else its answer is stale). */
export function isRunningChunk(join: Join, taskId: string): boolean {
  const from = chunkOf(join.prefix, taskId);
  return from !== undefined && (join.chunks?.running.some(([f]) => f === from) ?? false);
}
