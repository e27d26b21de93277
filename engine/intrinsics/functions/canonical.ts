import type { Json } from "../../core/json.js";
import { isJsonObject } from "../../core/json.js";

/**
 * A string that two JSON values share exactly when `jsonEqual` holds: object
 * keys sorted, numbers in one spelling. Lets ArrayUnique run in linear time.
 */
export function canonicalJson(value: Json): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (isJsonObject(value)) {
    const keys = Object.keys(value).sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k]!)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}
