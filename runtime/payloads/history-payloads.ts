import type { RunEvent } from "../../engine/core/events.js";
import { detailsKey, type HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import { sha256Hex, splitHash } from "../audit/chain.js";
import { pack, unpack } from "../store/codec.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";

/**
 * PAYLOADS STORED ONCE PER EXECUTION, BY CONTENT.
 *
 * An execution's input travels through every state: a 50-state Pass chain
 * carries the same 200 KB into 100 history events, its journal, its record's
 * input and output, and its run state. Stored inline, that was 119 times the
 * input (issue 21). Instead, every JSON text of at least `PAYLOAD_INLINE_CHARS`
 * is written once into the execution's payload hash (`keys.payloads`, field =
 * SHA-256 hex of the text, value = the text packed), and where it was the
 * stored form holds a reference: `PAYLOAD_MARK` + the hash.
 *
 * Where references may stand, and only there (everything else is stored as is):
 * - history events: the `input`, `output`, `parameters` and `details` fields of
 *   their `…EventDetails` (JSON texts, as AWS returns them);
 * - the execution record's `in` and `out` (JSON texts);
 * - journal entries: `{runId, event, refs}` with `refs` naming the event's
 *   `input`/`output` taken out (those are JSON values, not texts, so a reference
 *   cannot stand in their place: a user's input may itself be any string).
 * A JSON text never starts with U+0002 (JSON.stringify escapes it), so a marked
 * value cannot be a payload of its own.
 *
 * The audit chain hashes events as the API shows them (references resolved), so
 * the stored form can change without touching a hash; readers resolve before
 * anything else sees an event. The hash expires, persists and is purged with
 * the execution's other keys (store/lua/end-execution.ts, redrive, purge).
 */
export const PAYLOAD_MARK = "\u0002";

/** Shorter texts are cheaper inline than as a 65-character reference and a hash field. */
export const PAYLOAD_INLINE_CHARS = 1024;

/** The event-details fields that hold JSON texts (engine/core/history-details.ts, `Text`). */
const TEXT_FIELDS = ["input", "output", "parameters", "details"] as const;

/** The journal event fields that hold JSON values worth storing apart. */
const JOURNAL_FIELDS = ["input", "output"] as const;

/** The hash a reference names, or undefined for a value stored inline. */
export function referenced(value: string | null | undefined): string | undefined {
  return value && value.charCodeAt(0) === 2 ? value.slice(1) : undefined;
}

/** The payloads one write stores (hash → packed text), and the references that stand for them. */
export class PayloadBatch {
  readonly stored = new Map<string, string>();

  /** `text` itself when short, else a reference to it (and the text joins the batch). */
  ref(text: string): string {
    if (text.length < PAYLOAD_INLINE_CHARS) return text;
    const hash = sha256Hex(text);
    if (!this.stored.has(hash)) this.stored.set(hash, pack(text));
    return PAYLOAD_MARK + hash;
  }

  /** A payload the step stored by reference (engine/core/payload-ref.ts, `StorePayload`). */
  keep(hash: string, text: string): void {
    if (!this.stored.has(hash)) this.stored.set(hash, pack(text));
  }

  /** A history event in its stored form: its large JSON texts referenced. */
  event(event: HistoryEvent): HistoryEvent {
    const key = detailsKey(event.type);
    const details = key ? (event[key] as Record<string, unknown> | undefined) : undefined;
    if (!key || !details) return event;
    let copy: Record<string, unknown> | undefined;
    for (const field of TEXT_FIELDS) {
      const value = details[field];
      if (typeof value !== "string" || value.length < PAYLOAD_INLINE_CHARS) continue;
      copy ??= { ...details };
      copy[field] = this.ref(value);
    }
    return copy ? ({ ...event, [key]: copy } as HistoryEvent) : event;
  }

  /** A journal entry in its stored form (JSON text). */
  journal(runId: string, event: RunEvent): string {
    let refs: Record<string, string> | undefined;
    let stored: Record<string, unknown> = event as unknown as Record<string, unknown>;
    for (const field of JOURNAL_FIELDS) {
      const value = stored[field];
      if (value === undefined) continue;
      const text = JSON.stringify(value);
      if (text.length < PAYLOAD_INLINE_CHARS) continue;
      const ref = this.ref(text);
      refs ??= {};
      refs[field] = ref.slice(1);
      const { [field]: _, ...rest } = stored;
      stored = rest;
    }
    return JSON.stringify(refs ? { runId, event: stored, refs } : { runId, event });
  }

  /** The `payloads` field of a script's arguments: hash → packed text. */
  toArgs(): Record<string, string> | undefined {
    return this.stored.size > 0 ? Object.fromEntries(this.stored) : undefined;
  }
}

/** Stored history entries (raw), resolved: the AWS-shaped event and its chain hash. */
export async function readHistoryEntries(
  client: RedisClient,
  keys: Keys,
  exec: string,
  raw: readonly Buffer[],
): Promise<{ event: HistoryEvent; hash: string | undefined }[]> {
  const entries = raw.map((stored) => splitHash(JSON.parse(unpack(stored)) as HistoryEvent));
  const wanted = new Set<string>();
  for (const { event } of entries) {
    const details = detailsOf(event);
    if (!details) continue;
    for (const field of TEXT_FIELDS) {
      const hash = referenced(details[field] as string | undefined);
      if (hash) wanted.add(hash);
    }
  }
  if (wanted.size === 0) return entries;
  const texts = await readPayloads(client, keys, exec, wanted);
  for (const { event } of entries) {
    const details = detailsOf(event);
    if (!details) continue;
    for (const field of TEXT_FIELDS) {
      const hash = referenced(details[field] as string | undefined);
      if (hash) details[field] = texts.get(hash);
    }
  }
  return entries;
}

/** Stored journal entries (raw), resolved. */
export async function readJournalEntries(
  client: RedisClient,
  keys: Keys,
  exec: string,
  raw: readonly Buffer[],
): Promise<{ runId: string; event: RunEvent }[]> {
  const entries = raw.map(
    (stored) =>
      JSON.parse(unpack(stored)) as {
        runId: string;
        event: RunEvent;
        refs?: Record<string, string>;
      },
  );
  const wanted = new Set(entries.flatMap((e) => Object.values(e.refs ?? {})));
  const texts = wanted.size > 0 ? await readPayloads(client, keys, exec, wanted) : undefined;
  return entries.map(({ runId, event, refs }) => {
    if (!refs) return { runId, event };
    const whole = { ...event } as Record<string, unknown>;
    for (const [field, hash] of Object.entries(refs)) {
      whole[field] = JSON.parse(texts!.get(hash)!) as Json;
    }
    return { runId, event: whole as unknown as RunEvent };
  });
}

/** A record field (`in`, `out`) as its JSON text, resolved. */
export async function readRecordText(
  client: RedisClient,
  keys: Keys,
  exec: string,
  value: string,
): Promise<string> {
  const hash = referenced(value);
  if (!hash) return value;
  return (await readPayloads(client, keys, exec, new Set([hash]))).get(hash)!;
}

/**
 * The texts of `hashes`. A missing one means the store lost what a reference
 * names: that is corruption, not absence, and is said as such.
 */
export async function readPayloads(
  client: RedisClient,
  keys: Keys,
  exec: string,
  hashes: Set<string>,
): Promise<Map<string, string>> {
  const list = [...hashes];
  const values = await client.redis.hmgetBuffer(keys.payloads(exec), ...list);
  const texts = new Map<string, string>();
  list.forEach((hash, i) => {
    const value = values[i];
    if (!value) throw new Error(`execution '${exec}': stored payload ${hash} is missing`);
    texts.set(hash, unpack(value));
  });
  return texts;
}

function detailsOf(event: HistoryEvent): Record<string, unknown> | undefined {
  const key = detailsKey(event.type);
  return key ? (event[key] as Record<string, unknown> | undefined) : undefined;
}
