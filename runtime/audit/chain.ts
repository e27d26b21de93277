import * as crypto from "node:crypto";
import { canonicalJson } from "../../engine/core/canonical.js";
import type { HistoryEvent } from "../../engine/core/history.js";

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
 * Storage: each stored history entry is the event's JSON with its `hash` as
 * one more field (`withHash`); readers that serve the AWS-shaped history take
 * it out (`splitHash`). The execution record keeps `hh`, the hash of its last
 * event (the genesis until there is one), and `hg`, the genesis. The hashes are
 * computed in TypeScript from the `hh` read with the history count; the Lua
 * that appends the events checks `hh` with `hc` and sets both (see
 * scripts/commit-transition.ts), so the hash is part of the append's commit.
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
  for (const key of Object.keys(record).sort()) {
    const v = record[key];
    if (v === undefined) continue;
    out += (out.length === 1 ? "" : ",") + quotedKey(key) + canonicalStored(v);
  }
  return out + "}";
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
 * The stored form of `events` chained on `prevHash` (JSON text with `hash` appended), and the new head.
 * `storedForm` is what the entry holds (large payloads referenced, runtime/payloads.ts);
 * the hash is always of the event as the API shows it.
 */
export function chainEvents(
  prevHash: string,
  events: readonly HistoryEvent[],
  storedForm: (event: HistoryEvent) => HistoryEvent = (event) => event,
): { stored: string[]; head: string } {
  let head = prevHash;
  const stored = events.map((event) => {
    head = eventHash(head, event);
    return withHash(JSON.stringify(storedForm(event)), head);
  });
  return { stored, head };
}

/** `{…}` + hash → `{…,"hash":"<hex>"}`: appended, so the event's own fields keep their order. */
export function withHash(eventJson: string, hash: string): string {
  return `${eventJson.slice(0, -1)},"hash":"${hash}"}`;
}

/** A stored entry (parsed) split into the AWS-shaped event and its hash (absent if stored before the chain). */
export function splitHash(stored: HistoryEvent & { hash?: unknown }): {
  event: HistoryEvent;
  hash: string | undefined;
} {
  const { hash, ...event } = stored;
  return { event: event as HistoryEvent, hash: typeof hash === "string" ? hash : undefined };
}
