import { canonicalJson } from "../../engine/core/canonical.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import { sha256Hex, type ChainIdentity } from "./chain.js";
import type { VersionLink } from "./versions.js";

/**
 * The audit export of one execution (`GET /v1/executions/:id/audit`): JSONL,
 * one JSON object per line, in this order:
 *
 *   header   the execution record, the chain identity, the definition (and the
 *            state machine's version provenance when known), the export time
 *   event    one per history event, ids 1..N in history order, with its chain
 *            hash recomputed in full and, where one was signed when the event
 *            was written, its checkpoint signature (checkpoints.ts)
 *   trailer  the execution ARN, the chain's genesis and head, the status read
 *            with the head, a SHA-256 digest of every header field, where the
 *            key is kept, and an Ed25519 signature over `signedPayload` of those
 *
 * Everything a verifier needs is in the file (the public key too), so
 * `stepwise audit verify` works offline; `--public-key` pins the key it must be.
 *
 * Format 2 signs the header (through its digests: a verifier names the field
 * that changed) and carries the checkpoints. Format 1 (before) signed only the
 * ARN, the genesis and the head; verify still takes it, and says its header is
 * not covered.
 */
export const AUDIT_FORMAT = "stepwise-audit/2";
export const AUDIT_FORMAT_V1 = "stepwise-audit/1";
export type AuditFormat = typeof AUDIT_FORMAT | typeof AUDIT_FORMAT_V1;

export interface AuditHeader {
  type: "header";
  format: AuditFormat;
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
  /** The full chain hash; the stored check when the event does not hash to it; null: stored before the chain existed. */
  hash: string | null;
  /** Format 2: the Ed25519 signature (base64url) of the checkpoint at this event, if one was signed. */
  checkpoint?: string;
}

/** SHA-256 (hex) of each header field's RFC 8785 JSON; the execution record's field by field. */
export interface HeaderDigests {
  [field: string]: string | Record<string, string>;
}

export interface AuditTrailer {
  type: "trailer";
  executionArn: string;
  genesis: string;
  head: { eventId: number; hash: string };
  /** Format 2: the record's status, read in one step with the head (the commit that ends it sets both). */
  status?: string;
  /** Format 2: the header, digested (`headerDigests`). */
  header?: HeaderDigests;
  /** Format 2: the key was kept in Redis (no STEPWISE_AUDIT_KEY): no checkpoints, and little proven. */
  keptInRedis?: boolean;
  /** Format 2, key outside Redis: checkpoints are signed at event 1, every this many events, and each terminal event. */
  checkpointEvery?: number;
  algorithm: "Ed25519";
  /** SPKI PEM of the signing key. */
  publicKey: string;
  /** base64 Ed25519 signature of `signedPayload(trailer)`. */
  signature: string;
}

export type AuditLine = AuditHeader | AuditEventLine | AuditTrailer;

export type SignedFields = Pick<
  AuditTrailer,
  "executionArn" | "genesis" | "head" | "status" | "header" | "keptInRedis" | "checkpointEvery"
>;

/**
 * What the signature covers: RFC 8785 JSON of the trailer's fields above (format
 * 2, the format named in it); format 1 covered only the ARN, the genesis and the
 * head, so a format-2 export relabelled as format 1 does not verify.
 */
export function signedPayload(t: SignedFields, format: AuditFormat = AUDIT_FORMAT): Buffer {
  const head = { eventId: t.head.eventId, hash: t.head.hash };
  const { executionArn, genesis } = t;
  if (format === AUDIT_FORMAT_V1) {
    return Buffer.from(canonicalJson({ executionArn, genesis, head }));
  }
  const signed: Record<string, Json> = {
    format,
    executionArn,
    genesis,
    head,
    status: t.status ?? null,
    header: (t.header ?? null) as Json,
    keptInRedis: t.keptInRedis ?? null,
  };
  if (t.checkpointEvery !== undefined) signed.checkpointEvery = t.checkpointEvery;
  return Buffer.from(canonicalJson(signed));
}

/**
 * The header's digests: every field's, and the execution record's field by field,
 * so that verify names what changed ("execution.input"). `header` as parsed from
 * its line (JSON: no undefined fields).
 */
export function headerDigests(header: Record<string, Json>): HeaderDigests {
  const digests: HeaderDigests = {};
  for (const [field, value] of Object.entries(header)) {
    if (
      field === "execution" &&
      value !== null &&
      typeof value === "object" &&
      !Array.isArray(value)
    ) {
      const fields: Record<string, string> = {};
      for (const [name, v] of Object.entries(value)) fields[name] = digest(v);
      digests[field] = fields;
    } else {
      digests[field] = digest(value);
    }
  }
  return digests;
}

const digest = (value: Json | undefined) => sha256Hex(canonicalJson(value ?? null));

/** The header fields (`execution.input`, `versions`…) whose digests differ, with how. */
export function headerChanges(signed: HeaderDigests, header: Record<string, Json>): string[] {
  const actual = headerDigests(header);
  const changes: string[] = [];
  const compare = (path: string, a: unknown, b: unknown) => {
    if (a === undefined) changes.push(`${path} added`);
    else if (b === undefined) changes.push(`${path} removed`);
    else if (typeof a === "object" && typeof b === "object" && a !== null && b !== null) {
      const nested = new Set([...Object.keys(a), ...Object.keys(b)]);
      for (const k of [...nested].sort()) {
        compare(
          `${path}.${k}`,
          (a as Record<string, unknown>)[k],
          (b as Record<string, unknown>)[k],
        );
      }
    } else if (a !== b) changes.push(`${path} changed`);
  };
  for (const field of [...new Set([...Object.keys(signed), ...Object.keys(actual)])].sort()) {
    compare(field, signed[field], actual[field]);
  }
  return changes;
}
