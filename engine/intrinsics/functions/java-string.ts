import type { Json } from "../../core/json.js";
import { isJsonObject } from "../../core/json.js";

/**
 * How AWS's (Java) States.Format prints a value in place of `{}`: strings as
 * they are, objects like `java.util.Map.toString()` (`{Arg1=1, Arg2=[]}`),
 * arrays like `List.toString()` (`[1, 2]`), everything else as JSON. Recorded
 * in the conformance data (test_generic::test_format_2#7).
 */
export function javaString(value: Json): string {
  if (typeof value === "string") return value;
  if (typeof value === "number") return javaNumber(value);
  if (Array.isArray(value)) return `[${value.map(javaString).join(", ")}]`;
  if (isJsonObject(value)) {
    return `{${Object.keys(value)
      .map((k) => `${k}=${javaString(value[k]!)}`)
      .join(", ")}}`;
  }
  return String(value);
}

/**
 * Integers print with all their digits (JSON integers are Java longs/BigIntegers,
 * never `1.0E21`); fractions print as the shortest round-trip decimal, as Java
 * does, with Java's exponent marker.
 */
export function javaNumber(value: number): string {
  if (Number.isInteger(value) && Math.abs(value) < 1e21) return value.toFixed(0);
  if (Number.isInteger(value)) return BigInt(value).toString();
  return String(value).replace("e+", "E").replace("e-", "E-");
}
