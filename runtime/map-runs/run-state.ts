import type { RunState } from "../../engine/core/run.js";
import { unpack } from "../store/codec.js";
import { RUN_FIELDS } from "../store/fields.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";

/** Most slices a state is stored in (store/lua/run-state.ts: past them it is one field). */
const MAX_SLICES = 120;

const FIELDS = [
  RUN_FIELDS.stateSlices,
  RUN_FIELDS.state,
  ...Array.from({ length: MAX_SLICES }, (_, i) => `${RUN_FIELDS.state}${i + 1}`),
];

/**
 * A run's state as its hash stores it (store/lua/run-state.ts: whole in `RUN.state`,
 * or in `RUN.stateSlices` 64-byte slices), without the large input kept apart from
 * it; undefined when the run is gone or its state unreadable. One HMGET, so the
 * slices are of one state. For the readers of a running Map Run's counters
 * (map-run-store.ts).
 */
export async function readRunState(
  redis: RedisClient["redis"],
  keys: Pick<Keys, "run">,
  run: string,
): Promise<RunState | undefined> {
  const [count, whole, ...slices] = await redis.hmgetBuffer(keys.run(run), ...FIELDS);
  const n = Number(count?.toString() ?? "0");
  const parts = slices.slice(0, n);
  if (parts.some((part) => !part)) return undefined;
  const stored = n > 0 ? Buffer.concat(parts as Buffer[]) : whole;
  if (!stored) return undefined;
  try {
    return JSON.parse(unpack(stored)) as RunState;
  } catch {
    return undefined;
  }
}
