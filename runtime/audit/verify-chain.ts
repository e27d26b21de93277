import type { KeyObject } from "node:crypto";
import { eventHash } from "./chain.js";
import { checkpointHolds, needsCheckpoint } from "./checkpoints.js";
import type { AuditEventLine, AuditTrailer } from "./document.js";
import type { Problem } from "./verify.js";

/** Where the signed checkpoints of a chain that holds are: the first and the last. */
export interface ChainReport {
  first?: number;
  last?: number;
}

/**
 * The walk over the events (verify.ts): ids 1..N in order, each event hashing
 * to its recorded hash on top of the previous one, the chain ending at the
 * signed head; with `checkpoints` (a format-2 export whose key Redis does not
 * hold), every checkpoint matching the recomputed full hash at its event, and
 * none missing where checkpoints.ts puts one, from the first checkpoint on
 * (events written before the key was set have none; the first checkpoint
 * vouches for them, as they were then).
 */
export function checkChain(
  events: AuditEventLine[],
  trailer: AuditTrailer,
  checkpoints?: { key: KeyObject; every: number },
): ChainReport | { problem: Problem } {
  const ids = events.map((line) => line.event.id);
  const report: ChainReport = {};
  let prev = trailer.genesis;
  for (let p = 0; p < events.length; p++) {
    const line = events[p]!;
    const linked = linkOf(line, p, ids, prev, trailer);
    if ("problem" in linked) return linked;
    prev = linked.hash;
    const problem = checkpoints && checkpointProblem(line, linked.hash, report, checkpoints);
    if (problem) return { problem };
  }
  const problem = endProblem(events, trailer, prev, report, checkpoints);
  return problem ? { problem } : report;
}

/** Event `p`: at its place (id p + 1, within the signed head), hashed, chaining on `prev`. */
function linkOf(
  { event, hash }: AuditEventLine,
  p: number,
  ids: number[],
  prev: string,
  trailer: AuditTrailer,
): { hash: string } | { problem: Problem } {
  const expected = p + 1;
  if (event.id !== expected) return { problem: idProblem(ids, p, expected) };
  if (expected > trailer.head.eventId) {
    return {
      problem: {
        kind: "inserted",
        eventId: event.id,
        message: `event ${event.id} was inserted: the signed head is event ${trailer.head.eventId}`,
      },
    };
  }
  if (hash === null) {
    return {
      problem: {
        kind: "unchained",
        eventId: event.id,
        message: `event ${event.id} has no hash (stored before the history was chained)`,
      },
    };
  }
  if (eventHash(prev, event) === hash) return { hash };
  if (ids[p + 1] === event.id) {
    return {
      problem: {
        kind: "inserted",
        eventId: event.id,
        message: `an event with id ${event.id} was inserted (the id appears twice; this one does not chain)`,
      },
    };
  }
  return {
    problem: {
      kind: "changed",
      eventId: event.id,
      message: `event ${event.id} (${event.type}) was changed: it does not hash to its recorded hash`,
    },
  };
}

/**
 * The event's checkpoint, if it carries one, matches its recomputed hash (and is
 * noted in `report`); one that should carry one, from the first checkpoint on, does.
 */
function checkpointProblem(
  { event, checkpoint }: AuditEventLine,
  hash: string,
  report: ChainReport,
  checkpoints: { key: KeyObject; every: number },
): Problem | undefined {
  if (checkpoint !== undefined) {
    if (!checkpointHolds(event.id, hash, String(checkpoint), checkpoints.key)) {
      const from = (report.last ?? 0) + 1;
      return {
        kind: "checkpoint",
        eventId: event.id,
        message: `the chain does not match the checkpoint signed at event ${event.id}: ${from === event.id ? `event ${from}` : `an event among ${from}..${event.id}`}${from === 1 ? " (or the chain's identity: execution ARN, version, definition hash)" : ""} was changed in storage and the checks after it recomputed (or the checkpoint was not signed with this key)`,
      };
    }
    report.first ??= event.id;
    report.last = event.id;
  } else if (report.first !== undefined && needsCheckpoint(event, checkpoints.every)) {
    return {
      kind: "checkpoint",
      eventId: event.id,
      message: `event ${event.id} (${event.type}) carries no signed checkpoint (one is signed at event 1, every ${checkpoints.every} events and each terminal event): it was removed in Redis, or the event was written by a process without STEPWISE_AUDIT_KEY`,
    };
  }
  return undefined;
}

/** After the walk: every event up to the signed head is there, chains to it, and was checkpointed. */
function endProblem(
  events: AuditEventLine[],
  trailer: AuditTrailer,
  prev: string,
  report: ChainReport,
  checkpoints: { key: KeyObject; every: number } | undefined,
): Problem | undefined {
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
  if (checkpoints && events.length > 0 && report.first === undefined) {
    return {
      kind: "checkpoint",
      message:
        "no event carries a signed checkpoint, though the export is signed with a key kept outside Redis: the checkpoints were removed in Redis, or the execution was written before STEPWISE_AUDIT_KEY was set (or by processes without it)",
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
