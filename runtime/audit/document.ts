import { canonicalJson } from "../../engine/core/canonical.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import type { ChainIdentity } from "./chain.js";
import type { VersionLink } from "./versions.js";

/**
 * The audit export of one execution (`GET /v1/executions/:id/audit`): JSONL,
 * one JSON object per line, in this order:
 *
 *   header   the execution record, the chain identity, the definition (and the
 *            state machine's version provenance when known)
 *   event    one per history event, ids 1..N in history order, with its chain hash
 *   trailer  the execution ARN, the chain's genesis and head, and an Ed25519
 *            signature over `signedPayload` of those
 *
 * Everything a verifier needs is in the file (the public key too), so
 * `stepwise audit verify` works offline; `--public-key` pins the key it must be.
 */
export const AUDIT_FORMAT = "stepwise-audit/1";

export interface AuditHeader {
  type: "header";
  format: typeof AUDIT_FORMAT;
  exportedAt: string;
  /** The execution record as the REST API shows it. */
  execution: Json;
  identity: ChainIdentity;
  /** The definition of the version the execution is pinned to. */
  definition: Json;
  /** The state machine's versions up to this one, each chained on the previous one's hash. */
  versions?: VersionLink[];
}

export interface AuditEventLine {
  type: "event";
  event: HistoryEvent;
  /** null: stored before the chain existed. */
  hash: string | null;
}

export interface AuditTrailer {
  type: "trailer";
  executionArn: string;
  genesis: string;
  head: { eventId: number; hash: string };
  algorithm: "Ed25519";
  /** SPKI PEM of the signing key. */
  publicKey: string;
  /** base64 Ed25519 signature of `signedPayload(trailer)`. */
  signature: string;
}

export type AuditLine = AuditHeader | AuditEventLine | AuditTrailer;

/** What the signature covers: RFC 8785 JSON of the ARN, the genesis and the head. */
export function signedPayload(t: Pick<AuditTrailer, "executionArn" | "genesis" | "head">): Buffer {
  const head = { eventId: t.head.eventId, hash: t.head.hash };
  return Buffer.from(canonicalJson({ executionArn: t.executionArn, genesis: t.genesis, head }));
}
