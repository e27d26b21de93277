import type { Json, JsonObject } from "../core/json.js";

/**
 * Turns what jsonata returned into plain JSON: sequences (arrays jsonata tags with
 * `sequence`, `keepSingleton`, …) become plain arrays, properties whose value is
 * undefined are dropped as JSON.stringify drops them, and nothing of jsonata's
 * (lambdas, regexes, native functions) may leave an expression.
 *
 * The copy also counts the size of the result: jsonata builds results by
 * reference, so `[1..100000].($big)` costs little memory until it is serialized.
 * A result whose JSON would exceed `maxUnits` UTF-16 units is refused while it is
 * copied (each unit is at least one UTF-8 byte, so this never refuses a result
 * that fits AWS's 256 KiB payload limit).
 */
export type Conversion =
  | { kind: "json"; value: Json }
  | { kind: "undefined" }
  | { kind: "unsupported" }
  | { kind: "tooLarge" };

class Unsupported extends Error {}
class TooLarge extends Error {}

export function toJson(value: unknown, maxUnits: number): Conversion {
  if (value === undefined) return { kind: "undefined" };
  let units = 0;
  const count = (n: number): void => {
    units += n;
    if (units > maxUnits) throw new TooLarge();
  };
  const copy = (v: unknown): Json => {
    switch (typeof v) {
      case "string":
        count(v.length + 2);
        return v;
      case "number":
        if (!Number.isFinite(v)) throw new Unsupported();
        count(8);
        return v;
      case "boolean":
        count(5);
        return v;
      case "object": {
        if (v === null) {
          count(4);
          return null;
        }
        if (Array.isArray(v)) {
          count(2);
          const out: Json[] = new Array<Json>(v.length);
          for (let i = 0; i < v.length; i++) {
            const item: unknown = v[i];
            out[i] = item === undefined ? null : copy(item);
            count(1);
          }
          return out;
        }
        const o = v as Record<string, unknown> & {
          _jsonata_lambda?: unknown;
          _jsonata_function?: unknown;
        };
        if (o._jsonata_lambda === true || o._jsonata_function === true) throw new Unsupported();
        count(2);
        const out: JsonObject = {};
        for (const key of Object.keys(o)) {
          const item = o[key];
          if (item === undefined) continue;
          count(key.length + 4);
          out[key] = copy(item);
        }
        return out;
      }
      default:
        // functions, symbols, bigints: not JSON
        throw new Unsupported();
    }
  };
  try {
    return { kind: "json", value: copy(value) };
  } catch (e) {
    if (e instanceof Unsupported) return { kind: "unsupported" };
    if (e instanceof TooLarge) return { kind: "tooLarge" };
    throw e;
  }
}

/** An upper bound check: does the JSON text of `value` have at most `limit` UTF-16 units? */
export function jsonFitsWithin(value: unknown, limit: number): boolean {
  let units = 0;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === "string") units += v.length + 2;
    else if (Array.isArray(v)) {
      units += 2 + v.length;
      for (const item of v) stack.push(item);
    } else if (typeof v === "object" && v !== null) {
      units += 2;
      for (const [key, item] of Object.entries(v)) {
        units += key.length + 4;
        stack.push(item);
      }
    } else units += 8;
    if (units > limit) return false;
  }
  return true;
}
