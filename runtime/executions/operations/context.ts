import type { TaskRunner } from "../../../task-runners/runner.js";
import type { ExecutionCache } from "../../commit/execution-cache.js";
import type { StartResult } from "../../contract/index.js";
import type { AliasStore } from "../../definitions/aliases.js";
import type { MachineStore } from "../../definitions/machines.js";
import type { RecentMeta } from "../../definitions/recent-meta.js";
import type { RuntimeSettings } from "../../settings.js";
import { shortIdOrSelf, type ShardRoom } from "../../shards/shard-rooms.js";
import type { ShardLayout } from "../../shards/shards.js";
import { executionArn } from "../../store/ids.js";
import type { Keys } from "../../store/keys.js";
import type { RedisClient } from "../../store/redis.js";
import type { SpanSink } from "../../tracing/sink.js";
import type { JobQueues } from "../../worker/queues.js";
import { ExecutionStore } from "../execution-store.js";
import { Pauses } from "../pause.js";

/**
 * Execution operations have one shape: a plain async function that takes an
 * `OperationContext` first, then the arguments of the `Runtime` method it answers
 * (contract/runtime.ts), and finds the execution's shard room itself (`roomOf`).
 * `RedisRuntime` (runtime/runtime.ts) delegates each method to one in a line or
 * two; a worker's bulk operations call the same functions (worker/bulk-worker.ts),
 * over a context of their own, without building a runtime.
 *
 * Where they are: start.ts, restart.ts and control.ts (list, stop, pause, resume,
 * purge) here; those with a module of their own beside it: ../express.ts
 * (EXPRESS starts), ../fork.ts, ../redrive.ts.
 *
 * The context holds what is shared by every operation of a process (connections,
 * settings, the shards once their count is read); per-execution state stays in
 * Redis, so two contexts (an API's, a worker's) over one deployment agree.
 */

/** What an operation needs of a shard: its keys, queues and execution stores. */
export type ExecutionRoom = Pick<ShardRoom, "keys" | "queues" | "executions" | "deps" | "pauses">;

/** The shards of the deployment, once their count is read (shards/shards.ts). */
export interface ExecutionShards {
  layout: ShardLayout;
  rooms: readonly ExecutionRoom[];
  /** One program cache for every shard: programs are the state machines'. */
  cache: ExecutionCache;
}

export interface OperationContext {
  readonly client: RedisClient;
  readonly settings: RuntimeSettings;
  /** Every operation awaits it: the shard count is read from Redis once. */
  readonly shards: Promise<ExecutionShards>;
  /** Where the spans of a commit made in this process go (a stop commits where it is asked). */
  spans(): Promise<SpanSink | undefined>;
}

/** What starts need besides: the state machines, and counting what this process created. */
export interface StartContext extends OperationContext {
  readonly machines: MachineStore;
  readonly aliases: AliasStore;
  /** Machine types and latest versions, as starts read them (at most once a second). */
  readonly recentMeta: RecentMeta;
  /** What EXPRESS executions' Task states call, in this process. */
  readonly expressRunners: readonly TaskRunner[];
  /** Counts the execution if the start created it (`executionsStartedTotal`); answers `result`. */
  counted(result: StartResult): StartResult;
}

/** The shard room of an execution, by its ARN (anything else: shard of itself, then 404). */
export async function roomOf(ctx: OperationContext, executionId: string): Promise<ExecutionRoom> {
  const { layout, rooms } = await ctx.shards;
  return rooms[layout.shardOf(shortIdOrSelf(executionId))]!;
}

/** The shard room a new execution of `machine` named `name` goes to. */
export function roomOfNew(
  ctx: OperationContext,
  machine: string,
  name: string,
): Promise<ExecutionRoom> {
  return roomOf(ctx, executionArn(machine, name));
}

/** One shard's execution stores, over a process's connections and program cache. */
export function executionRoom(
  shared: {
    client: RedisClient;
    machines: MachineStore;
    cache: ExecutionCache;
    settings: RuntimeSettings;
  },
  keys: Keys,
  queues: JobQueues,
): ExecutionRoom {
  const { client, machines, cache, settings } = shared;
  return {
    keys,
    queues,
    executions: new ExecutionStore(client, keys, machines, queues, cache, settings),
    deps: { client, keys, executions: cache, queues, settings },
    pauses: new Pauses(client, keys, queues, settings.leaseMs, settings.auditKeyFile),
  };
}
