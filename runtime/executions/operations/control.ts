import type {
  Caller,
  ExecutionRecord,
  ExecutionSummary,
  Page,
  Runtime,
} from "../../contract/index.js";
import { mergePages } from "../../shards/shard-rooms.js";
import { execOf, type ExecutionStore } from "../execution-store.js";
import { purgeExecution as purge } from "../purge.js";
import { roomOf, type ExecutionRoom, type OperationContext } from "./context.js";

/**
 * The operations that are one call on the execution's room (context.ts has the
 * shape): list, stop, pause, resume and purge. The work is done where it was:
 * ../execution-store.ts (list, stop), ../pause.ts, ../purge.ts. These five are
 * also all a bulk operation does (bulk.ts): `bulkTarget`.
 */

/** A page of executions, newest first, merged over the shards (shards/shard-rooms.ts). */
export async function listExecutions(
  ctx: OperationContext,
  options: Parameters<ExecutionStore["list"]>[0] = {},
): Promise<Page<ExecutionSummary>> {
  const { rooms } = await ctx.shards;
  return mergePages(
    await Promise.all(rooms.map((room) => room.executions.list(options))),
    options.limit,
  );
}

export async function stopExecution(
  ctx: OperationContext,
  executionId: string,
  options: { error?: string; cause?: string; caller?: Caller } = {},
  /** The execution's room when the caller found it: a Map Run's child is in its parent's. */
  room?: ExecutionRoom,
): Promise<ExecutionRecord> {
  // A stop commits here, not in a worker: the spans it ends are emitted here too.
  const spans = await ctx.spans();
  const { executions, deps } = room ?? (await roomOf(ctx, executionId));
  return executions.stop(executionId, options, spans ? { ...deps, spans } : deps);
}

export async function pauseExecution(
  ctx: OperationContext,
  executionId: string,
  options: { reason?: string; caller?: Caller } = {},
): Promise<ExecutionRecord> {
  const { pauses, executions } = await roomOf(ctx, executionId);
  await pauses.pause(executionId, execOf(executionId), options);
  return executions.describe(executionId);
}

export async function resumeExecution(
  ctx: OperationContext,
  executionId: string,
  options: { caller?: Caller } = {},
): Promise<ExecutionRecord> {
  const { pauses, executions } = await roomOf(ctx, executionId);
  await pauses.resume(executionId, execOf(executionId), options);
  return executions.describe(executionId);
}

export async function purgeExecution(ctx: OperationContext, executionId: string): Promise<void> {
  const { keys } = await roomOf(ctx, executionId);
  return purge(ctx.client, keys, executionId, execOf(executionId));
}

/** What a bulk operation calls on each execution, and the listing it pages through. */
export type BulkTarget = Pick<
  Runtime,
  "listExecutions" | "stopExecution" | "pauseExecution" | "resumeExecution" | "purgeExecution"
>;

/** The bulk actions over `ctx`, as the API's runtime does them. */
export function bulkTarget(ctx: OperationContext): BulkTarget {
  return {
    listExecutions: (options) => listExecutions(ctx, options),
    stopExecution: (executionId, options) => stopExecution(ctx, executionId, options),
    pauseExecution: (executionId, options) => pauseExecution(ctx, executionId, options),
    resumeExecution: (executionId, options) => resumeExecution(ctx, executionId, options),
    purgeExecution: (executionId) => purgeExecution(ctx, executionId),
  };
}
