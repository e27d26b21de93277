import { sha256Hex } from "../intrinsics/digest/sha256.js";

/**
 * A Task's operation key: one per entry into the state, the same for every Retry
 * attempt, every worker crash and every redelivery of that entry, and a new one
 * when the state is entered again (a loop). It is what a provider needs to
 * deduplicate a side effect: a payment retried after a timeout reaches Stripe
 * under the same `Idempotency-Key`, which answers the first charge again instead
 * of making a second. A per-attempt key (the task id) would defeat exactly that.
 *
 * It is derived from the entry's first attempt id (`<runId>#<serial>`: the
 * execution, the Map iteration or Parallel branch path, and the run's own
 * counter), which replay reproduces whatever order sibling runs committed in, and
 * kept in the frame for the retries. Hashed to 32 hex characters (128 bits), so it
 * fits any header and tells nothing of the names inside.
 */
export function operationKey(firstAttemptId: string): string {
  return sha256Hex(new TextEncoder().encode(firstAttemptId)).slice(0, 32);
}
