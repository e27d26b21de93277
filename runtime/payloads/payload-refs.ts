import { isPayloadRef, PAYLOAD_REF_PREFIX } from "../../engine/core/payload-ref.js";
import { StatesError } from "../../engine/core/errors.js";
import type { Json } from "../../engine/core/json.js";
import { unpack } from "../store/codec.js";
import type { Keys } from "../store/keys.js";
import { readPayloads } from "./history-payloads.js";
import type { RedisClient } from "../store/redis.js";

/**
 * The Redis side of payloads by reference (engine/core/payload-ref.ts). A
 * reference's text lives in its execution's payload hash (`keys.payloads`,
 * runtime/payloads/history-payloads.ts), written by the commit of the step that made it, so it
 * expires, persists and is purged with the execution.
 *
 * `step` reads only what this process has loaded (`LoadedPayloads`); a step that
 * reads into one it has not raises PayloadNeeded, and transition.ts loads it and
 * steps again. A task's input is resolved whole here, before its resource sees it.
 */

/** Payloads parsed in this process, by hash, bounded by their size (oldest out first). */
export class LoadedPayloads {
  private readonly values = new Map<string, { value: Json; size: number }>();
  private bytes = 0;

  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  get(hash: string): Json | undefined {
    return this.values.get(hash)?.value;
  }

  /** Loads `hash` of execution `exec` (one HGET); false when the execution holds no such payload. */
  async load(client: RedisClient, keys: Keys, exec: string, hash: string): Promise<boolean> {
    if (this.values.has(hash)) return true;
    const stored = await client.redis.hgetBuffer(keys.payloads(exec), hash);
    if (!stored) return false;
    const text = unpack(stored);
    this.values.set(hash, { value: JSON.parse(text) as Json, size: text.length });
    this.bytes += text.length;
    for (const [old, entry] of this.values) {
      if (this.bytes <= this.maxBytes || old === hash) break;
      this.values.delete(old);
      this.bytes -= entry.size;
    }
    return true;
  }
}

/**
 * `input` with every reference in it replaced by its payload: what a task's
 * resource receives (a model call's Messages holding a stored tool result, an
 * HTTP body). At most `maxBytes` of payloads in all; more fails the attempt with
 * States.DataLimitExceeded, as an oversized input would.
 */
export async function resolveTaskInput(
  client: RedisClient,
  keys: Keys,
  exec: string,
  input: Json,
  maxBytes: number,
): Promise<Json> {
  const refs: string[] = [];
  collectRefs(input, refs);
  if (refs.length === 0) return input;
  const texts = await readPayloads(client, keys, exec, new Set(refs));
  let total = 0;
  for (const text of texts.values()) total += text.length;
  if (total > maxBytes) {
    throw new StatesError(
      "States.DataLimitExceeded",
      `The task input refers to ${total} bytes of stored payloads, more than ${maxBytes} (STEPWISE_PAYLOAD_RESOLVE_MAX_BYTES)`,
    );
  }
  return replaceRefs(input, texts);
}

function collectRefs(value: Json, out: string[]): void {
  if (isPayloadRef(value)) {
    out.push(value.$ref.slice(PAYLOAD_REF_PREFIX.length));
    return;
  }
  if (Array.isArray(value)) for (const item of value) collectRefs(item, out);
  else if (value !== null && typeof value === "object")
    for (const item of Object.values(value)) collectRefs(item, out);
}

function replaceRefs(value: Json, texts: Map<string, string>): Json {
  if (isPayloadRef(value))
    return JSON.parse(texts.get(value.$ref.slice(PAYLOAD_REF_PREFIX.length))!) as Json;
  if (Array.isArray(value)) return value.map((item) => replaceRefs(item, texts));
  if (value !== null && typeof value === "object") {
    const out: Record<string, Json> = {};
    for (const [key, item] of Object.entries(value)) out[key] = replaceRefs(item, texts);
    return out;
  }
  return value;
}
