import { createHash } from "node:crypto";

/** JSON with object keys sorted (RFC 8785): content hashes, idempotent start, approval envelopes. */
export { canonicalJson } from "../../engine/core/canonical.js";

export function sha256(text: string): string {
  return createHash("sha256").update(text).digest("hex");
}

/**
 * What an execution keeps to recognise its input on an idempotent start: 128
 * bits of SHA-256, base64url (22 characters rather than 64: it is stored with
 * every execution, and collisions only matter against an adversary who already
 * controls the start request).
 */
export function inputDigest(canonical: string): string {
  return createHash("sha256").update(canonical).digest().subarray(0, 16).toString("base64url");
}

/** Opaque pagination cursors: base64url of a small JSON object. */
export function encodeCursor(value: Record<string, string | number>): string {
  return Buffer.from(JSON.stringify(value)).toString("base64url");
}

export function decodeCursor(cursor: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as unknown;
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}
