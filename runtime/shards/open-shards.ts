import type { Redis } from "ioredis";
import { ApprovalFeed } from "../approvals/approval-feed.js";
import { ApprovalStore } from "../approvals/approval-store.js";
import { ExecutionCache } from "../commit/execution-cache.js";
import { RuntimeError } from "../contract/index.js";
import type { MachineStore } from "../definitions/machines.js";
import { ActivityWakeups } from "../executions/activity-wakeups.js";
import { HistoryFeed } from "../executions/history-feed.js";
import { executionRoom } from "../executions/operations/context.js";
import { EndWaiters } from "../executions/waiters.js";
import type { RuntimeSettings } from "../settings.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";
import { JobQueues } from "../worker/queues.js";
import { shortIdOrSelf, type ShardRoom, type Sharded } from "./shard-rooms.js";
import { resolveShardCount, ShardLayout } from "./shards.js";

/**
 * The API's runtime (runtime/runtime.ts) over the deployment's shards: each
 * shard's room of stores over the process's shared connections (shard-rooms.ts),
 * opened once the shard count is read, and how a call finds the room it is for:
 * by execution ARN, by task token, by approval id.
 */
export async function openShards(shared: {
  client: RedisClient;
  /** The control keys, where the shard count is kept. */
  control: Keys;
  settings: RuntimeSettings;
  machines: MachineStore;
  /** The BullMQ queues' connection (not the client's: BullMQ wants its own). */
  queueConnection: Redis;
}): Promise<Sharded> {
  const { client, control, settings, queueConnection } = shared;
  const count = await resolveShardCount(client.redis, control, settings.shards);
  const layout = new ShardLayout(settings.prefix, count);
  const cache = new ExecutionCache(client, layout, undefined, settings.payloads);
  const rooms = layout.shards.map((keys): ShardRoom => {
    const queues = new JobQueues(queueConnection, keys);
    return {
      ...executionRoom({ ...shared, cache }, keys, queues),
      approvals: new ApprovalStore(client, keys, queues, settings),
      historyFeed: new HistoryFeed(client, keys),
      approvalFeed: new ApprovalFeed(client, keys, settings),
    };
  });
  return {
    layout,
    rooms,
    cache,
    waiters: new EndWaiters(
      settings,
      layout.shards.map((keys) => keys.endedChannel),
    ),
    activities: new ActivityWakeups(
      settings,
      layout.shards.map((keys) => keys.activityChannel),
    ),
  };
}

/** The shard of an execution (by ARN): its stores. */
export function shardRoomOf({ layout, rooms }: Sharded, executionId: string): ShardRoom {
  return rooms[layout.shardOf(shortIdOrSelf(executionId))]!;
}

/**
 * The shard that issued a token (shards.ts). An approval's token is refused: an
 * approval is answered by a decision bound to its envelope, never by its bare token.
 */
export async function roomOfToken({ layout, rooms }: Sharded, token: string): Promise<ShardRoom> {
  const shard = layout.shardOfToken(token);
  if (shard === undefined) throw new RuntimeError("InvalidToken", "The task token is not valid");
  const room = rooms[shard]!;
  if (await room.approvals.isApprovalToken(token)) {
    throw new RuntimeError(
      "ApprovalRequiresDecision",
      "This token belongs to an approval: decide it with POST /v1/approvals/{approvalId}/decisions and its envelopeHash",
    );
  }
  return room;
}

/**
 * The shard holding an approval. Its id is a hash of its token, which alone names
 * the shard, so each shard is asked (approvals are decided at human pace); an id
 * none holds goes to shard 0, whose store answers that it does not exist.
 */
export async function roomOfApproval({ rooms }: Sharded, approvalId: string): Promise<ShardRoom> {
  if (rooms.length === 1) return rooms[0]!;
  const held = await Promise.all(rooms.map((room) => room.approvals.holds(approvalId)));
  return rooms[held.indexOf(true)] ?? rooms[0]!;
}
