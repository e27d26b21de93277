import { sign, verify, type KeyObject } from "node:crypto";
import { canonicalJson } from "../../engine/core/canonical.js";
import type { HistoryEvent, HistoryEventType } from "../../engine/core/history.js";
import { readSigningKey } from "./signing.js";

/**
 * SIGNED CHECKPOINTS OF THE CHAIN (DESIGN.md, "History and audit").
 *
 * The chain alone does not stop someone who can write to Redis: the recipe is
 * public, so they can edit an event, recompute every later check and set the
 * head `hh`, and the export (which signs what Redis holds when it is made) signs
 * the forgery. What they cannot do is sign. So, when the signing key lives
 * outside Redis (`STEPWISE_AUDIT_KEY`), the writer of an event signs the chain's
 * full hash at that event, in the same commit that appends it, at:
 *
 *   - event 1 (ExecutionStarted or ExecutionForked: the input, and through the
 *     genesis the identity and definition), so every execution written under
 *     the key has a checkpoint from its first commit on;
 *   - every event whose id is a multiple of CHECKPOINT_EVERY;
 *   - every terminal event (ExecutionSucceeded, -Failed, -Aborted, -TimedOut).
 *
 * The signature is Ed25519 over RFC 8785 JSON of {checkpoint, eventId, hash}
 * (`hash` the full 64-hex SHA-256, never the stored 8-byte check), kept in the
 * entry's `hash` field after its check: `<check>.<signature, base64url>`. The
 * export recomputes the full chain from the events and carries each signature
 * beside its event; `verify` checks every one against the recomputed hash and
 * that none of those positions lacks one. Why that is sound, with 8-byte checks
 * in storage: nothing is verified against a check. A signed hash at event k
 * commits, by SHA-256's collision resistance, to the genesis and events 1..k as
 * they were when k was written; changing any of them changes the recomputed hash
 * at k, and a new signature needs the key. The check only names, when someone
 * did not bother to recompute checks, which event they changed.
 *
 * What remains open (README, "Provable audit"): the events after the last
 * checkpoint (fewer than CHECKPOINT_EVERY, and never a terminal one), and a
 * rollback: cutting the history back to before a checkpoint together with that
 * checkpoint, the record and its status, as if the later events had not yet
 * happened. A verifier holding an earlier export, or the execution's end, sees
 * that; the export alone cannot.
 */
export const CHECKPOINT_EVERY = 32;

const TERMINAL = new Set<HistoryEventType>([
  "ExecutionSucceeded",
  "ExecutionFailed",
  "ExecutionAborted",
  "ExecutionTimedOut",
]);

export function isTerminal(type: HistoryEventType): boolean {
  return TERMINAL.has(type);
}

/** Whether the writer of `event` signs a checkpoint at it (and verify requires one). */
export function needsCheckpoint(
  event: Pick<HistoryEvent, "id" | "type">,
  every: number = CHECKPOINT_EVERY,
): boolean {
  return event.id === 1 || event.id % every === 0 || TERMINAL.has(event.type);
}

/** What a checkpoint signs: RFC 8785 JSON, its own `checkpoint` field keeping it apart from an export's trailer. */
export function checkpointPayload(eventId: number, hash: string): Buffer {
  return Buffer.from(canonicalJson({ checkpoint: "stepwise/1", eventId, hash }));
}

/** Signs the chain's full hash at an event: base64url Ed25519 signature. */
export type CheckpointSigner = (eventId: number, hash: string) => string;

export function checkpointSignerOf(privateKey: KeyObject): CheckpointSigner {
  return (eventId, hash) =>
    sign(null, checkpointPayload(eventId, hash), privateKey).toString("base64url");
}

const SIGNERS = new Map<string, CheckpointSigner>();

/**
 * The checkpoint signer of the key file `STEPWISE_AUDIT_KEY` names (read once
 * per process and path); none without one: a key kept in Redis is one that
 * whoever could rewrite the history can read, so its checkpoints would prove
 * nothing and only cost memory. Throws when the file is not an Ed25519 key: a
 * history written without the checkpoints it should have would not verify.
 */
export function checkpointSigner(keyFile: string | undefined): CheckpointSigner | undefined {
  if (!keyFile) return undefined;
  let signer = SIGNERS.get(keyFile);
  if (signer === undefined) {
    signer = checkpointSignerOf(readSigningKey(keyFile));
    SIGNERS.set(keyFile, signer);
  }
  return signer;
}

export function checkpointHolds(
  eventId: number,
  hash: string,
  signature: string,
  publicKey: KeyObject,
): boolean {
  try {
    return verify(
      null,
      checkpointPayload(eventId, hash),
      publicKey,
      Buffer.from(signature, "base64url"),
    );
  } catch {
    return false;
  }
}
