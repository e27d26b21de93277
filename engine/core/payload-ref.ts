import { sha256Hex } from "../intrinsics/digest/sha256.js";
import { StatesError } from "./errors.js";
import type { Json, JsonObject } from "./json.js";

/**
 * LARGE PAYLOADS BY REFERENCE (issue 17; off unless the deployment sets
 * STEPWISE_PAYLOAD_STORE, see runtime/settings.ts).
 *
 * A task result, or a state output, larger than the execution's `refOverBytes`
 * does not fail the execution with States.DataLimitExceeded: it is stored once
 * (the step emits `StorePayload`; the driver keeps the text with the
 * execution's other payloads) and travels as
 *
 *   {"$ref": "stepwise:payload:<sha256 hex>", "size": <bytes>, "preview": "<first 1 KiB>"}
 *
 * Passing it on (`$.doc`, `{% $states.result %}`, a Map item) passes the
 * reference. Reading INTO it (`$.doc.title`, `{% $states.result.ResponseBody %}`)
 * reads the payload, up to `resolveMaxBytes`. Task inputs are resolved whole by
 * the driver before a resource sees them (runtime/payloads/payload-refs.ts).
 *
 * `step` is pure and synchronous, and a reference is read deep inside JSONPath
 * and JSONata evaluation, far from any context object. So the payloads a step
 * may read are installed for the duration of the step (`withPayloads`) and read
 * here; one the driver has not loaded raises `PayloadNeeded`, which is not an
 * ASL error: the driver loads it and steps again (step is deterministic and
 * never mutates its input, so the second step is the step).
 */
export const PAYLOAD_REF_PREFIX = "stepwise:payload:";
const PREVIEW_CHARS = 1024;

export interface PayloadRef {
  $ref: string;
  size: number;
  preview: string;
}

/** Set in the execution context when the deployment stores large payloads by reference. */
export interface PayloadPolicy {
  /** Results and outputs whose JSON is larger than this become references. */
  refOverBytes: number;
  /** The largest payload a read into a reference loads (bytes). */
  resolveMaxBytes: number;
}

/** Raised when a step reads into a payload the driver has not loaded: load `hash`, step again. */
export class PayloadNeeded extends Error {
  constructor(readonly hash: string) {
    super(`payload ${hash} is needed`);
  }
}

export function isPayloadRef(value: unknown): value is PayloadRef {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const ref = (value as JsonObject).$ref;
  return typeof ref === "string" && ref.startsWith(PAYLOAD_REF_PREFIX);
}

/** The reference to a JSON text, and its hash. */
export function payloadRef(text: string): { ref: PayloadRef; hash: string } {
  // Pure TypeScript SHA-256: the engine imports no I/O module (node:crypto included).
  const bytes = new TextEncoder().encode(text);
  const hash = sha256Hex(bytes);
  const ref = {
    $ref: PAYLOAD_REF_PREFIX + hash,
    size: bytes.length,
    preview: text.slice(0, PREVIEW_CHARS),
  };
  return { ref, hash };
}

/** What a step can read: the driver's loaded payloads, and those this step stored. */
interface Installed {
  policy: PayloadPolicy;
  load: (hash: string) => Json | undefined;
  stored: Map<string, Json>;
}

let installed: Installed | undefined;

/** Runs `fn` (a step) with these payloads readable; `load` answers undefined for one not loaded. */
export function withPayloads<T>(
  policy: PayloadPolicy | undefined,
  load: ((hash: string) => Json | undefined) | undefined,
  fn: () => T,
): T {
  if (!policy) return fn();
  const outer = installed;
  installed = { policy, load: load ?? (() => undefined), stored: new Map() };
  try {
    return fn();
  } finally {
    installed = outer;
  }
}

/** Makes a payload this step stored readable in the same step (a task's result read by its ResultSelector). */
export function rememberPayload(hash: string, value: Json): void {
  installed?.stored.set(hash, value);
}

/** The reference's own fields: reading them reads the reference, not the payload. */
const OWN = new Set(["$ref", "size", "preview"]);

/**
 * `value` itself, unless it is a reference and `key` reads into it: then the
 * payload. `key` undefined: any read into it (an index, a wildcard).
 */
export function readInto(value: Json, key?: string): Json {
  if (!installed || !isPayloadRef(value) || (key !== undefined && OWN.has(key))) return value;
  const hash = value.$ref.slice(PAYLOAD_REF_PREFIX.length);
  const stored = installed.stored.get(hash);
  if (stored !== undefined) return stored;
  if (value.size > installed.policy.resolveMaxBytes) {
    throw new StatesError(
      "States.DataLimitExceeded",
      `The payload ${value.$ref} (${value.size} bytes) is larger than the ${installed.policy.resolveMaxBytes} bytes a read into a reference may load (STEPWISE_PAYLOAD_RESOLVE_MAX_BYTES)`,
    );
  }
  const loaded = installed.load(hash);
  if (loaded === undefined) throw new PayloadNeeded(hash);
  return loaded;
}
