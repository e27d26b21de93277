import type { Json } from "./json.js";

/**
 * RFC 8785 (JSON Canonicalization Scheme) for the values Stepwise stores: object
 * keys sorted by UTF-16 code units (what `Array.prototype.sort` compares), no
 * white space, numbers and strings as ECMAScript's JSON.stringify writes them,
 * which is what RFC 8785 prescribes. Equal values give equal text.
 */
export function canonicalJson(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k]!)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
