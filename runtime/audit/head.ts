import type { HistoryEvent } from "../../engine/core/history.js";
import { pack } from "../store/codec.js";
import { EXECUTION_FIELDS, storedFields } from "../store/fields.js";
import type { Keys } from "../store/keys.js";
import type { HistoryHead } from "../commit/commit-locks.js";
import type { RedisClient } from "../store/redis.js";
import { chainEvents, UNANCHORED } from "./chain.js";
import type { CheckpointSigner } from "./checkpoints.js";

/**
 * The history count and chain head of an execution, for the writers of history
 * outside a transition (give-up, pause, resume): they build their one event with
 * id count + 1, chain it here, and their script checks both fields as it appends.
 */
export async function loadHistoryHead(
  client: RedisClient,
  keys: Keys,
  exec: string,
): Promise<HistoryHead> {
  const [hc, hh] = await client.redis.hmget(
    keys.execution(exec),
    ...storedFields(EXECUTION_FIELDS, ["historyCount", "historyHead"]),
  );
  return { count: Number(hc ?? 0), hash: hh ?? "" };
}

/**
 * One event chained on `head`: its stored form (packed) and the new head hash.
 * `checkpoints` signs it when it needs a checkpoint (checkpoints.ts): every
 * writer of history passes the signer of `settings.auditKeyFile`.
 */
export function chainOne(
  head: HistoryHead,
  event: HistoryEvent,
  checkpoints?: CheckpointSigner,
): { stored: string; hash: string } {
  const chained = chainEvents(head.hash || UNANCHORED, [event], undefined, checkpoints);
  return { stored: pack(chained.stored[0]!), hash: chained.head };
}
