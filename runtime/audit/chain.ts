import * as crypto from "node:crypto";
import { canonicalJson } from "../../engine/core/canonical.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import { needsCheckpoint, type CheckpointSigner } from "./checkpoints.js";

/**
 * THE HISTORY HASH CHAIN (DESIGN.md, "History and audit").
 *
 * Order: the chain follows the execution's history list, event ids 1..N in
 * the order the list holds them. That list is the one history of the whole
 * execution: a Map iteration's or Parallel branch's events are in it too,
 * interleaved as their commits landed. Every writer appends under the history
 * count fence (`hc` on the execution record), so the list order, the id order
 * and the chain order are the same order and the chain cannot fork.
 *
 *   genesis   = SHA-256(canonical {executionArn, stateMachineVersionArn, definitionHash})
 *   hash(e_1) = SHA-256(genesis ‖ canonical JSON of e_1)
 *   hash(e_k) = SHA-256(hash(e_k-1) ‖ canonical JSON of e_k)
 *
 * `canonical JSON` is RFC 8785 (engine/core/canonical.ts) of the event as the
 * REST history shows it, without its `hash`. Hashes are lower-case hex, and `‖`
 * concatenates the previous hash's 64 hex characters with the canonical text:
 * SHA-256 runs over the UTF-8 of that string (one string, so any language's
 * verifier needs no byte juggling, and it is one native call per event).
 *
 * Storage: the execution record keeps `hh`, the hash of its last event (the
 * genesis until there is one), and `hg`, the genesis's check (below): the export
 * reads the identity anyway, so it recomputes the genesis and compares, and
 * every record is 53 bytes shorter than with the genesis itself (records
 * written before keep their 64-hex `hg`, used as it is). The hashes are computed in
 * TypeScript from the `hh` read with the history count; the Lua that appends the
 * events checks `hh` with `hc` and sets both (see store/scripts/commit-transition.ts),
 * so the head is part of the append's commit.
 *
 * Each stored entry is the event's JSON with one more field, `hash`: not the
 * event's 64-hex hash but its check, the first 8 bytes of it in base64url (11
 * characters), and at a signed checkpoint (checkpoints.ts) the Ed25519
 * signature of the full hash after it: `<check>.<signature>` (98 characters).
 * Full hashes cost 70 bytes per event for ever, a quarter of a parked
 * execution's memory, and the one reader that needs them, the audit export, reads
 * the whole history from the start anyway: it recomputes them (`rechain`). The
 * check is there to name the event that was changed in storage: the export
 * gives such an event its stored check in place of a hash, so `stepwise audit
 * verify` reports it `changed`. Security does not rest on the check, which
 * anyone who can write to Redis can recompute: verify checks the recomputed
 * full hashes against the signed checkpoints, and the recomputed chain must
 * end at the head the export signs. Readers that serve the AWS-shaped history
 * take the field out (`splitHash`); entries an earlier build stored with a full
 * hash keep it.
 */
export interface ChainIdentity {
  executionArn: string;
  /** `arn:…:stateMachine:<name>:<version>`: the version the execution is pinned to. */
  stateMachineVersionArn: string;
  /** SHA-256 hex of the version's canonical definition (machines.ts stores it as `hash`). */
  definitionHash: string;
}

/**
 * Where the chain of an execution started before the chain existed begins (its
 * record has no `hh`): its later events are chained, on nothing it can prove.
 */
export const UNANCHORED = "0".repeat(64);

export function genesisHash(identity: ChainIdentity): string {
  const { executionArn, stateMachineVersionArn, definitionHash } = identity;
  return sha256Hex(canonicalJson({ executionArn, stateMachineVersionArn, definitionHash }));
}

/**
 * The genesis an export signs, from the record's `hg`: none for an execution
 * started before the chain; a full genesis as older records kept it; else the
 * identity's genesis when its check is `hg`. An identity changed in storage
 * signs the check itself, which no identity hashes to, so verify names the
 * genesis (and the definition) as what changed.
 */
export function anchoredGenesis(hg: string | null, identity: ChainIdentity): string {
  if (hg === null) return UNANCHORED;
  if (hg.length === 64) return hg;
  const genesis = genesisHash(identity);
  return eventCheck(genesis) === hg ? genesis : hg;
}

/** The hash of `event` (without any `hash` field of its own) on top of `prevHash`. */
export function eventHash(prevHash: string, event: HistoryEvent): string {
  return sha256Hex(prevHash + canonicalStored(event));
}

/**
 * SHA-256 of a string's UTF-8, hex. `crypto.hash` (Node 20.12+) is the one-shot
 * form, about twice as fast as createHash for an event-sized input: this runs
 * for every history event of every commit.
 */
export const sha256Hex: (text: string) => string =
  typeof crypto.hash === "function"
    ? (text) => crypto.hash("sha256", text, "hex")
    : (text) => crypto.createHash("sha256").update(text).digest("hex");

/**
 * RFC 8785 text of `value` as JSON.stringify would store it: an `undefined`
 * field is left out (and is `null` in an array), so the hash built from the
 * object in hand equals the one a reader recomputes from the stored JSON,
 * without a parse per event on the commit path.
 */
export function canonicalStored(value: unknown): string {
  if (typeof value !== "object" || value === null) return JSON.stringify(value);
  // String building without intermediate arrays: this runs for every event of every commit.
  if (Array.isArray(value)) {
    let out = "[";
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      out += (i === 0 ? "" : ",") + (v === undefined ? "null" : canonicalStored(v));
    }
    return out + "]";
  }
  const record = value as Record<string, unknown>;
  let out = "{";
  for (const key of sortedKeys(record)) {
    const v = record[key];
    if (v === undefined) continue;
    out += (out.length === 1 ? "" : ",") + quotedKey(key) + canonicalStored(v);
  }
  return out + "}";
}

/**
 * An object's keys in code-unit order, as `Object.keys(o).sort()`. Events and
 * their details have a handful of keys, and an insertion sort in place needs no
 * work array: Array.prototype.sort allocates one per call, and the chain sorts
 * every object of every event it commits.
 */
function sortedKeys(record: object): string[] {
  const keys = Object.keys(record);
  // (Quadratic: a large object, which events do not hold, takes the library sort.)
  if (keys.length > 16) return keys.sort();
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i]!;
    let j = i - 1;
    while (j >= 0 && keys[j]! > key) {
      keys[j + 1] = keys[j]!;
      j--;
    }
    keys[j + 1] = key;
  }
  return keys;
}

/**
 * `"key":`, remembered: history events use a few dozen key names over and over
 * (bounded, so that user-named keys in a payload cannot grow it without end).
 */
const QUOTED = new Map<string, string>();
function quotedKey(key: string): string {
  let quoted = QUOTED.get(key);
  if (quoted === undefined) {
    quoted = `${JSON.stringify(key)}:`;
    if (QUOTED.size < 1000) QUOTED.set(key, quoted);
  }
  return quoted;
}

/**
 * The stored form of `events` chained on `prevHash` (JSON text with the check of
 * its hash appended), and the new head. `storedForm` is what the entry holds (large
 * payloads referenced, runtime/payloads/history-payloads.ts); the hash is always of the event as
 * the API shows it. With `checkpoints` (a key outside Redis), the events that
 * need a checkpoint (checkpoints.ts) carry its signature after the check.
 */
export function chainEvents(
  prevHash: string,
  events: readonly HistoryEvent[],
  storedForm: (event: HistoryEvent) => HistoryEvent = (event) => event,
  checkpoints?: CheckpointSigner,
): { stored: string[]; head: string } {
  let head = prevHash;
  const stored = events.map((event) => {
    head = eventHash(head, event);
    const check = eventCheck(head);
    const signed =
      checkpoints && needsCheckpoint(event) ? `${check}.${checkpoints(event.id, head)}` : check;
    return withHash(JSON.stringify(storedForm(event)), signed);
  });
  return { stored, head };
}

/** What a stored entry keeps of its event's hash: the first 8 bytes, base64url. */
export function eventCheck(hash: string): string {
  return Buffer.from(hash.slice(0, 16), "hex").toString("base64url");
}

/** An event read back for the export: its recomputed hash (or its stored check, when it does not match) and its checkpoint. */
export interface Rechained {
  event: HistoryEvent;
  hash: string;
  /** The signature of a checkpoint at this event (base64url), when one was stored. */
  checkpoint?: string;
}

/**
 * The chain over entries read back in id order from `prevHash` (the genesis for
 * event 1): each event's hash. An entry whose stored check does not match the
 * recomputed hash was changed in storage: it keeps its check, which no verifier
 * accepts as its hash, and the chain goes on from the recomputed one.
 */
export function rechain(
  prevHash: string,
  entries: readonly { event: HistoryEvent; hash: string | undefined }[],
): Rechained[] {
  let head = prevHash;
  return entries.map(({ event, hash: stored }) => {
    if (stored !== undefined && stored.length === 64) {
      head = stored; // a full hash, as an earlier build stored it
      return { event, hash: stored };
    }
    head = eventHash(head, event);
    if (stored === undefined) return { event, hash: head };
    const dot = stored.indexOf(".");
    const check = dot < 0 ? stored : stored.slice(0, dot);
    const line: Rechained = { event, hash: check === eventCheck(head) ? head : check };
    if (dot >= 0) line.checkpoint = stored.slice(dot + 1);
    return line;
  });
}

/** `{…}` + check → `{…,"hash":"<check>"}`: appended, so the event's own fields keep their order. */
export function withHash(eventJson: string, check: string): string {
  return `${eventJson.slice(0, -1)},"hash":"${check}"}`;
}

/** A stored entry (parsed) split into the AWS-shaped event and its hash (absent if stored before the chain). */
export function splitHash(stored: HistoryEvent & { hash?: unknown }): {
  event: HistoryEvent;
  hash: string | undefined;
} {
  const { hash, ...event } = stored;
  return { event: event as HistoryEvent, hash: typeof hash === "string" ? hash : undefined };
}
