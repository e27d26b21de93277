import type { Json, JsonObject } from "../../engine/core/json.js";

/**
 * An SDK output as the JSON a state sees. The SDK hands back JavaScript values
 * JSON has no word for: binary blobs (`Uint8Array`), instants (`Date`), sets, big
 * numbers and streamed bodies (S3 GetObject's `Body`). Step Functions shows blobs
 * and bodies as text (an `aws-sdk:lambda:invoke` Payload, an `aws-sdk:s3:getObject`
 * Body), instants as ISO 8601 strings; `$metadata` is the SDK's own and dropped.
 * Binary that is not UTF-8 is given as base64, as AWS's JSON protocols carry it.
 */
export class BodyTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`a response body is over ${limit} bytes`);
    this.name = "BodyTooLarge";
  }
}

export async function outputJson(value: unknown, maxBodyBytes: number): Promise<Json> {
  const converted = await toJson(value, maxBodyBytes);
  return converted === undefined ? {} : converted;
}

async function toJson(value: unknown, maxBodyBytes: number): Promise<Json | undefined> {
  if (value === undefined || typeof value === "function" || typeof value === "symbol") {
    return undefined;
  }
  if (value === null || typeof value === "string" || typeof value === "boolean") return value;
  if (typeof value === "number") return Number.isFinite(value) ? value : String(value);
  if (typeof value === "bigint") return value.toString();
  if (value instanceof Date) return value.toISOString();
  if (value instanceof Uint8Array) return blobText(value);
  if (Array.isArray(value) || value instanceof Set) {
    const out: Json[] = [];
    for (const item of value) out.push((await toJson(item, maxBodyBytes)) ?? null);
    return out;
  }
  if (isStreamingBody(value)) {
    const bytes = await value.transformToByteArray();
    if (bytes.length > maxBodyBytes) throw new BodyTooLarge(maxBodyBytes);
    return blobText(bytes);
  }
  if (typeof value === "object") {
    // A DynamoDB NumberValue and the like: values that say what they are as text.
    if (!isPlain(value) && typeof (value as { toString?: unknown }).toString === "function") {
      const text = String(value);
      if (text !== "[object Object]") return text;
    }
    const out: JsonObject = {};
    for (const [key, item] of Object.entries(value)) {
      if (key === "$metadata") continue;
      const converted = await toJson(item, maxBodyBytes);
      if (converted !== undefined) out[key] = converted;
    }
    return out;
  }
  return String(value);
}

/** A body the SDK streams (`sdkStreamMixin`): readable once, as bytes or text. */
interface StreamingBody {
  transformToByteArray(): Promise<Uint8Array>;
}

function isStreamingBody(value: unknown): value is StreamingBody {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as Partial<StreamingBody>).transformToByteArray === "function"
  );
}

function isPlain(value: object): boolean {
  const proto = Object.getPrototypeOf(value) as unknown;
  return proto === Object.prototype || proto === null;
}

const UTF8 = new TextDecoder("utf-8", { fatal: true });

function blobText(bytes: Uint8Array): string {
  try {
    return UTF8.decode(bytes);
  } catch {
    return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64");
  }
}

/** What a request member carries when a definition gives JSON where AWS takes text. */
export function jsonText(value: Json | undefined): string | undefined {
  if (value === undefined) return undefined;
  return typeof value === "string" ? value : JSON.stringify(value);
}
