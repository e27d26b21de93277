import type { Redis } from "ioredis";
import { executionOf } from "../store/ids.js";
import { makeKeys, type Keys } from "../store/keys.js";

/**
 * Executions spread over a fixed number of shards (issue 19), as Temporal spreads
 * them over history shards: shard `i` has its own hash tag (keys.ts), so on a Redis
 * Cluster the shards land on different masters, and each has its own BullMQ
 * queues and timer schedule, so workers scale with them.
 *
 * An execution's shard is a hash of its short id; its Map iterations, Parallel
 * branches, tasks and timers carry that id in theirs, so they stay with it and a
 * join is still one script on one slot. A task token cannot be hashed back to its
 * execution, so a token of a sharded deployment names its shard (`s<i>-…`).
 *
 * The count is decided when a deployment is created and stored under the control
 * tag; a process started with another count refuses to start, because every
 * execution would then be looked for on the wrong shard. A deployment created
 * before shards existed keeps working as one shard: its single tag `{sw}` is
 * exactly shard 0 of 1 (keys.ts), so nothing moves.
 */
export const DEFAULT_SHARDS = 16;
/** Most shards a deployment may have: more only multiply idle queues and timer polls. */
export const MAX_SHARDS = 1024;

export class ShardLayout {
  /** Every shard's keys, by index; each one's control keys point at the control tag. */
  readonly shards: readonly Keys[];

  constructor(
    readonly prefix: string,
    readonly count: number,
  ) {
    this.shards = Array.from({ length: count }, (_, i) => makeKeys(prefix, i, count));
  }

  /** Keys for what belongs to no execution (state machines, activities, operations). */
  get control(): Keys {
    return this.shards[0]!;
  }

  /** The shard of an execution, or of a run, task or timer of it (short ids). */
  shardOf(shortId: string): number {
    return this.count === 1 ? 0 : shardOfExecution(executionOf(shortId), this.count);
  }

  keysOf(shortId: string): Keys {
    return this.shards[this.shardOf(shortId)]!;
  }

  /** The shard a task token was issued by; undefined for a token no shard issued. */
  shardOfToken(token: string): number | undefined {
    if (this.count === 1) return 0;
    const match = /^s(\d{1,4})-/.exec(token);
    const shard = match ? Number(match[1]) : NaN;
    return shard < this.count ? shard : undefined;
  }
}

/** FNV-1a (32 bits) over the id's UTF-8 bytes: stable across processes and versions. */
export function shardOfExecution(exec: string, count: number): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(exec, "utf8")) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % count;
}

/**
 * The deployment's shard count: the stored one; for a deployment that has none,
 * 1 when it already holds data (it was created before shards), else `wanted`
 * (default `DEFAULT_SHARDS`), stored for every later process. A `wanted` that
 * disagrees with what is stored is refused: it would look for executions on the
 * wrong shards.
 */
export async function resolveShardCount(
  redis: Redis,
  control: Keys,
  wanted: number | undefined,
): Promise<number> {
  let stored = await redis.get(control.shardCount);
  if (stored === null) {
    // Data under the single tag `{sw}` (control.executions is that tag's index when
    // the count is 1) is a deployment from before shards: it stays one shard.
    const existing =
      (await redis.exists(control.storageVersion, control.machines, control.executions)) > 0;
    const count = existing ? 1 : (wanted ?? DEFAULT_SHARDS);
    await redis.set(control.shardCount, String(count), "NX");
    stored = await redis.get(control.shardCount);
  }
  const count = Number(stored);
  if (!Number.isInteger(count) || count < 1 || count > MAX_SHARDS)
    throw new Error(`the shard count stored at '${control.shardCount}' is not valid: '${stored}'`);
  if (wanted !== undefined && wanted !== count) {
    throw new Error(
      `STEPWISE_SHARDS=${wanted}, but the deployment under key prefix '${control.bullPrefix}' was created with ${count} shard${count === 1 ? "" : "s"}; the count is fixed when a deployment is created (unset STEPWISE_SHARDS, or use a new STEPWISE_PREFIX)`,
    );
  }
  return count;
}

/**
 * `STEPWISE_SHARDS`: a whole number 1–1024, or unset. `STEPWISE_WORKER_SHARDS`:
 * the shards a worker serves, `0-3,8` (unset: every shard). Malformed values stop
 * the process with a message that names the variable.
 */
export function shardsFromEnv(raw: string | undefined): number | undefined {
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < 1 || value > MAX_SHARDS)
    throw new Error(`STEPWISE_SHARDS='${raw}' must be a whole number from 1 to ${MAX_SHARDS}`);
  return value;
}

export function workerShardsFromEnv(raw: string | undefined): number[] | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  const shards = new Set<number>();
  for (const part of raw.split(",")) {
    const match = /^\s*(\d{1,4})\s*(?:-\s*(\d{1,4})\s*)?$/.exec(part);
    const from = Number(match?.[1]);
    const to = match?.[2] !== undefined ? Number(match[2]) : from;
    if (!match || to < from)
      throw new Error(
        `STEPWISE_WORKER_SHARDS='${raw}': '${part}' is not a shard number or range (like 0-3,8)`,
      );
    for (let i = from; i <= to; i++) shards.add(i);
  }
  return [...shards].sort((a, b) => a - b);
}

/** The shards of `count` that `served` names, refusing any the deployment lacks. */
export function servedShards(count: number, served: readonly number[] | undefined): number[] {
  if (served === undefined) return Array.from({ length: count }, (_, i) => i);
  const missing = served.filter((i) => i >= count);
  if (missing.length > 0)
    throw new Error(
      `STEPWISE_WORKER_SHARDS names shard ${missing[0]}, but the deployment has ${count} (0-${count - 1})`,
    );
  return [...served];
}
