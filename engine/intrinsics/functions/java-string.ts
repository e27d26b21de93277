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
 * Integers print with all their digits (JSON integers are Java ints, longs or
 * BigIntegers, never `1.0E21`). Fractions print as Java's Double.toString does:
 * the shortest round-trip digits, plain between 10^-3 and 10^7, otherwise
 * `d.dddE±n` (recorded: 1.1 prints as "1.1").
 */
export function javaNumber(value: number): string {
  if (Number.isInteger(value)) {
    return Math.abs(value) < 1e21 ? value.toFixed(0) : BigInt(value).toString();
  }
  const abs = Math.abs(value);
  if (abs >= 1e-3 && abs < 1e7) return String(value);
  const [mantissa = "", exponent = "0"] = value.toExponential().split("e");
  return `${mantissa.includes(".") ? mantissa : `${mantissa}.0`}E${Number(exponent)}`;
}
