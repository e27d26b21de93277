import { createPublicKey, verify as verifySignature } from "node:crypto";
import { canonicalJson } from "../../engine/core/canonical.js";
import { sha256 } from "../canonical.js";
import { eventHash, genesisHash, UNANCHORED } from "./chain.js";
import { brokenVersionLink } from "./versions.js";
import {
  AUDIT_FORMAT,
  signedPayload,
  type AuditEventLine,
  type AuditHeader,
  type AuditLine,
  type AuditTrailer,
} from "./document.js";

/**
 * How an audit export fails to verify. The walk stops at the first problem:
 * - `definition`: the header's definition or identity is not what the chain was
 *   started on (the signed genesis);
 * - `changed`: an event does not hash to its recorded hash (edited, or its hash was);
 * - `removed` / `inserted` / `reordered`: found from the ids, which must run 1..N
 *   in order (a missing id; an id seen twice, or past the signed head; an id that
 *   comes later than it should);
 * - `unchained`: an execution, or an event, stored before the chain existed;
 * - `head`: the events chain to another head than the signed one (an event was
 *   changed and every hash after it recomputed);
 * - `signature`: the signature does not verify, or was made with another key than
 *   the one given;
 * - `malformed`: not an audit export.
 */
export type ProblemKind =
  | "malformed"
  | "definition"
  | "changed"
  | "removed"
  | "inserted"
  | "reordered"
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

/** Verifies an export (document.ts) offline. `publicKeyPem` pins the key it must be signed with. */
export function verifyAudit(text: string, options: { publicKeyPem?: string } = {}): Verdict {
  const parsed = parse(text);
  if ("problem" in parsed) return { ok: false, problem: parsed.problem };
  const { header, events, trailer } = parsed;
  const problem =
    checkIdentity(header, trailer) ??
    checkChain(events, trailer) ??
    checkSignature(trailer, options.publicKeyPem);
  if (problem) return { ok: false, problem };
  const warnings = options.publicKeyPem
    ? []
    : ["no public key given: the signature was checked with the key inside the file"];
  return { ok: true, executionArn: trailer.executionArn, head: trailer.head, warnings };
}

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
  if (header?.type !== "header" || header.format !== AUDIT_FORMAT)
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

function checkChain(events: AuditEventLine[], trailer: AuditTrailer): Problem | undefined {
  const ids = events.map((line) => line.event.id);
  let prev = trailer.genesis;
  for (let p = 0; p < events.length; p++) {
    const { event, hash } = events[p]!;
    const expected = p + 1;
    if (event.id !== expected) return idProblem(ids, p, expected);
    if (expected > trailer.head.eventId) {
      return {
        kind: "inserted",
        eventId: event.id,
        message: `event ${event.id} was inserted: the signed head is event ${trailer.head.eventId}`,
      };
    }
    if (hash === null) {
      return {
        kind: "unchained",
        eventId: event.id,
        message: `event ${event.id} has no hash (stored before the history was chained)`,
      };
    }
    if (eventHash(prev, event) !== hash) {
      if (ids[p + 1] === event.id) {
        return {
          kind: "inserted",
          eventId: event.id,
          message: `an event with id ${event.id} was inserted (the id appears twice; this one does not chain)`,
        };
      }
      return {
        kind: "changed",
        eventId: event.id,
        message: `event ${event.id} (${event.type}) was changed: it does not hash to its recorded hash`,
      };
    }
    prev = hash;
  }
  if (events.length < trailer.head.eventId) {
    const first = events.length + 1;
    return {
      kind: "removed",
      eventId: first,
      message: `events ${first}..${trailer.head.eventId} were removed: the file ends at event ${events.length}, the signed head is event ${trailer.head.eventId}`,
    };
  }
  if (prev !== trailer.head.hash) {
    return {
      kind: "head",
      eventId: events.length,
      message:
        "the events do not chain to the signed head: an event was changed and the hashes after it recomputed",
    };
  }
  return undefined;
}

/** The id at position p is not p + 1: which of removed, inserted or reordered. */
function idProblem(ids: number[], p: number, expected: number): Problem {
  const found = ids[p]!;
  if (ids.slice(0, p).includes(found)) {
    return {
      kind: "inserted",
      eventId: found,
      message: `an event with id ${found} was inserted after event ${expected - 1} (the id appears twice)`,
    };
  }
  if (ids.indexOf(expected, p + 1) > p) {
    return {
      kind: "reordered",
      eventId: expected,
      message: `the events were reordered: event ${found} comes where event ${expected} belongs (event ${expected} comes later)`,
    };
  }
  return {
    kind: "removed",
    eventId: expected,
    message: `event ${expected} was removed (event ${found} follows event ${expected - 1})`,
  };
}

function checkSignature(trailer: AuditTrailer, pinned: string | undefined): Problem | undefined {
  const signature = (message: string): Problem => ({ kind: "signature", message });
  let key;
  try {
    key = createPublicKey(pinned ?? trailer.publicKey);
    if (pinned !== undefined && !sameKey(pinned, trailer.publicKey)) {
      return signature(
        "the signature was replaced: the file was signed with another key than the public key given",
      );
    }
  } catch {
    return signature("the public key is not a valid PEM key");
  }
  const ok = verifySignature(
    null,
    signedPayload(trailer),
    key,
    Buffer.from(String(trailer.signature), "base64"),
  );
  return ok
    ? undefined
    : signature(
        "the signature does not verify: the signature or what it signs (execution ARN, genesis, head) was replaced",
      );
}

function sameKey(a: string, b: string): boolean {
  try {
    const der = (pem: string) => createPublicKey(pem).export({ type: "spki", format: "der" });
    return der(a).equals(der(b));
  } catch {
    return false;
  }
}
