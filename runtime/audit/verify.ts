import { createPublicKey, verify as verifySignature, type KeyObject } from "node:crypto";
import { canonicalJson } from "../../engine/core/canonical.js";
import type { HistoryEventType } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import { sha256 } from "../store/canonical.js";
import { genesisHash, UNANCHORED } from "./chain.js";
import { checkChain, type ChainReport } from "./verify-chain.js";
import { brokenVersionLink } from "./versions.js";
import {
  AUDIT_FORMAT,
  AUDIT_FORMAT_V1,
  headerChanges,
  signedPayload,
  type AuditEventLine,
  type AuditFormat,
  type AuditHeader,
  type AuditLine,
  type AuditTrailer,
} from "./document.js";

/**
 * How an audit export fails to verify. The walk stops at the first problem:
 * - `signature`: the signature does not verify, or was made with another key than
 *   the one given (format 2 checks it first: what it covers is then trusted);
 * - `definition`: the header's definition or identity is not what the chain was
 *   started on (the signed genesis);
 * - `header`: a header field (the execution record's, the versions, the export
 *   time…) is not the one signed: the file was edited after export;
 * - `changed`: an event does not hash to its recorded hash (edited, or its hash was);
 * - `removed` / `inserted` / `reordered`: found from the ids, which must run 1..N
 *   in order (a missing id; an id seen twice, or past the signed head; an id that
 *   comes later than it should); and an ended execution whose history does not
 *   end with the event that ended it;
 * - `checkpoint`: the recomputed chain does not match a signed checkpoint (an
 *   event before it was changed in Redis and the checks after it recomputed), or
 *   an event that must carry one carries none (checkpoints.ts);
 * - `unchained`: an execution, or an event, stored before the chain existed;
 * - `head`: the events chain to another head than the signed one (an event was
 *   changed and every hash after it recomputed);
 * - `malformed`: not an audit export.
 */
export type ProblemKind =
  | "malformed"
  | "definition"
  | "header"
  | "changed"
  | "removed"
  | "inserted"
  | "reordered"
  | "checkpoint"
  | "unchained"
  | "head"
  | "signature";

export interface Problem {
  kind: ProblemKind;
  /** The event (history id) where the chain breaks, when there is one. */
  eventId?: number;
  message: string;
}

export type Verdict =
  | { ok: true; executionArn: string; head: { eventId: number; hash: string }; warnings: string[] }
  | { ok: false; problem: Problem };

export const KEPT_IN_REDIS_WARNING =
  "signed with a key kept in Redis: proves only that the file was not changed after export (set STEPWISE_AUDIT_KEY to a key file Redis does not hold)";

/** Verifies an export (document.ts) offline. `publicKeyPem` pins the key it must be signed with. */
export function verifyAudit(text: string, options: { publicKeyPem?: string } = {}): Verdict {
  const parsed = parse(text);
  if ("problem" in parsed) return { ok: false, problem: parsed.problem };
  const { header, events, trailer } = parsed;
  const format = header.format;
  const key = signingKey(trailer, options.publicKeyPem);
  if ("problem" in key) return { ok: false, problem: key.problem };
  const warnings = options.publicKeyPem
    ? []
    : ["no public key given: the signature was checked with the key inside the file"];
  if (format === AUDIT_FORMAT_V1) {
    // As format 1 was verified: the signature last, over the ARN, genesis and head only.
    const problem =
      checkIdentity(header, trailer) ??
      problemOf(checkChain(events, trailer)) ??
      checkSignature(trailer, key, format);
    if (problem) return { ok: false, problem };
    warnings.push(
      `format ${AUDIT_FORMAT_V1}: the signature covers the events' chain, not the header (execution record, versions, export time), and the export carries no checkpoints`,
    );
    return { ok: true, executionArn: trailer.executionArn, head: trailer.head, warnings };
  }
  const shape = trailerShape(trailer);
  if (shape) return { ok: false, problem: shape };
  const checkpoints = trailer.keptInRedis ? undefined : key.key;
  const early =
    checkSignature(trailer, key, format) ??
    checkIdentity(header, trailer) ??
    checkHeader(header, trailer);
  if (early) return { ok: false, problem: early };
  const chained = checkChain(
    events,
    trailer,
    checkpoints && { key: checkpoints, every: trailer.checkpointEvery! },
  );
  if ("problem" in chained) return { ok: false, problem: chained.problem };
  const ended = checkEnd(events, trailer.status!);
  if (ended) return { ok: false, problem: ended };
  warnings.push(...checkpointWarnings(trailer, events.length, chained));
  return { ok: true, executionArn: trailer.executionArn, head: trailer.head, warnings };
}

const problemOf = (r: ChainReport | { problem: Problem }) =>
  "problem" in r ? r.problem : undefined;

function parse(
  text: string,
): { header: AuditHeader; events: AuditEventLine[]; trailer: AuditTrailer } | { problem: Problem } {
  const malformed = (message: string) => ({ problem: { kind: "malformed" as const, message } });
  const lines: AuditLine[] = [];
  for (const [i, line] of text.split("\n").entries()) {
    if (line.trim() === "") continue;
    try {
      lines.push(JSON.parse(line) as AuditLine);
    } catch {
      return malformed(`line ${i + 1} is not JSON`);
    }
  }
  const header = lines[0];
  const trailer = lines[lines.length - 1];
  if (header?.type !== "header" || !FORMATS.has(header.format))
    return malformed(`the first line is not a ${AUDIT_FORMAT} header`);
  if (lines.length < 2 || trailer?.type !== "trailer")
    return malformed("the last line is not the signed trailer (the file was cut short?)");
  const events = lines.slice(1, -1);
  for (const line of events) {
    if (line.type !== "event" || typeof line.event?.id !== "number")
      return malformed(`a line between the header and the trailer is not an event`);
  }
  return { header, events: events as AuditEventLine[], trailer };
}

const FORMATS = new Set<unknown>([AUDIT_FORMAT, AUDIT_FORMAT_V1]);

/** Format 2's signed fields have the types verify relies on (the signature is checked next). */
function trailerShape(trailer: AuditTrailer): Problem | undefined {
  const every = trailer.checkpointEvery;
  const ok =
    typeof trailer.status === "string" &&
    typeof trailer.header === "object" &&
    trailer.header !== null &&
    typeof trailer.keptInRedis === "boolean" &&
    (trailer.keptInRedis || (Number.isSafeInteger(every) && every! > 0));
  return ok
    ? undefined
    : {
        kind: "malformed",
        message: `the trailer lacks the fields ${AUDIT_FORMAT} signs (status, header, keptInRedis, checkpointEvery)`,
      };
}

function checkIdentity(header: AuditHeader, trailer: AuditTrailer): Problem | undefined {
  const { identity } = header;
  if (trailer.genesis === UNANCHORED) {
    return {
      kind: "unchained",
      message:
        "the execution started before its history was chained: the chain does not start on its identity",
    };
  }
  const definitionHash = sha256(canonicalJson(header.definition));
  if (definitionHash !== identity.definitionHash) {
    return {
      kind: "definition",
      message: `the definition changed: it hashes to ${definitionHash}, the chain identity records ${identity.definitionHash}`,
    };
  }
  if (identity.executionArn !== trailer.executionArn) {
    return {
      kind: "definition",
      message: `the header names execution ${identity.executionArn}, the signature ${trailer.executionArn}`,
    };
  }
  const versions = header.versions ?? [];
  const broken = brokenVersionLink(versions);
  if (broken) {
    return {
      kind: "definition",
      message: `the definition's version chain is broken at version ${broken.version}: a version record was changed`,
    };
  }
  const pinnedVersion = Number(identity.stateMachineVersionArn.split(":").pop());
  const pinned = versions.find((link) => link.version === pinnedVersion);
  if (pinned && pinned.definitionHash !== identity.definitionHash) {
    return {
      kind: "definition",
      message: `the definition changed: version ${pinned.version} records definition hash ${pinned.definitionHash}, the chain identity ${identity.definitionHash}`,
    };
  }
  if (genesisHash(identity) !== trailer.genesis) {
    return {
      kind: "definition",
      message:
        "the definition changed: the identity (execution ARN, version, definition hash) is not the one the chain started on (the signed genesis)",
    };
  }
  return undefined;
}

/** Format 2: every header field digests to what the trailer signed. */
function checkHeader(header: AuditHeader, trailer: AuditTrailer): Problem | undefined {
  const changes = headerChanges(trailer.header!, header as unknown as Record<string, Json>);
  if (changes.length === 0) return undefined;
  return {
    kind: "header",
    message: `header changed: ${changes.join(", ")} (not what the export signed: the file was edited after export)`,
  };
}

const ENDED_BY: Record<string, HistoryEventType> = {
  SUCCEEDED: "ExecutionSucceeded",
  FAILED: "ExecutionFailed",
  TIMED_OUT: "ExecutionTimedOut",
  ABORTED: "ExecutionAborted",
};

/**
 * An ended execution's history ends with what ended it: its last terminal (or
 * redrive) event is the one its status names. The status was read with the head
 * (export.ts), and the commit that ends an execution sets both, so a history cut
 * short in Redis (its last events dropped, `hc` and `hh` reset) is named here.
 */
function checkEnd(events: AuditEventLine[], status: string): Problem | undefined {
  const endedBy = ENDED_BY[status];
  if (endedBy === undefined) return undefined;
  let last: AuditEventLine["event"] | undefined;
  for (let p = events.length - 1; p >= 0 && last === undefined; p--) {
    const { event } = events[p]!;
    if (ENDED_BY_TYPES.has(event.type) || event.type === "ExecutionRedriven") last = event;
  }
  if (last?.type === endedBy) return undefined;
  const end = events.at(-1)?.event;
  return {
    kind: "removed",
    eventId: events.length + 1,
    message: `the execution is ${status} (its status, read with the head), but its history ends at event ${end?.id ?? 0}${end ? ` (${end.type})` : ""} without ${endedBy} after ${last ? `${last.type} (event ${last.id})` : "its start"}: its last events were removed`,
  };
}

const ENDED_BY_TYPES = new Set<string>(Object.values(ENDED_BY));

function checkpointWarnings(trailer: AuditTrailer, count: number, chained: ChainReport): string[] {
  if (trailer.keptInRedis) return [KEPT_IN_REDIS_WARNING];
  const warnings: string[] = [];
  const { first, last } = chained;
  if (first !== undefined && first > 1) {
    warnings.push(
      `events 1..${first - 1} were written before checkpoints were signed (before STEPWISE_AUDIT_KEY was set): the checkpoint at event ${first} vouches for them as Redis held them then`,
    );
  }
  if (last !== undefined && last < count) {
    warnings.push(
      `events ${last + 1}..${count} come after the last signed checkpoint (event ${last}): they are chained but not signed, so someone with write access to Redis could have changed them`,
    );
  }
  return warnings;
}

/** The key the signature must verify with: the pinned one, which must be the file's too. */
function signingKey(
  trailer: AuditTrailer,
  pinned: string | undefined,
): { key: KeyObject } | { problem: Problem } {
  const signature = (message: string) => ({ problem: { kind: "signature" as const, message } });
  try {
    const key = createPublicKey(pinned ?? trailer.publicKey);
    if (pinned !== undefined && !sameKey(pinned, trailer.publicKey)) {
      return signature(
        "the signature was replaced: the file was signed with another key than the public key given",
      );
    }
    return { key };
  } catch {
    return signature("the public key is not a valid PEM key");
  }
}

function checkSignature(
  trailer: AuditTrailer,
  { key }: { key: KeyObject },
  format: AuditFormat,
): Problem | undefined {
  let ok = false;
  try {
    ok = verifySignature(
      null,
      signedPayload(trailer, format),
      key,
      Buffer.from(String(trailer.signature), "base64"),
    );
  } catch {
    ok = false;
  }
  const covered =
    format === AUDIT_FORMAT_V1
      ? "execution ARN, genesis, head"
      : "execution ARN, genesis, head, status, header digests, key and checkpoint policy";
  return ok
    ? undefined
    : {
        kind: "signature",
        message: `the signature does not verify: the signature or what it signs (${covered}) was replaced`,
      };
}

function sameKey(a: string, b: string): boolean {
  try {
    const der = (pem: string) => createPublicKey(pem).export({ type: "spki", format: "der" });
    return der(a).equals(der(b));
  } catch {
    return false;
  }
}
