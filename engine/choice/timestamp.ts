/**
 * Timestamps as Choice rules read them (`Timestamp*` operators and `IsTimestamp`):
 * the `rfc3339` profile of core/timestamp.ts, the same the validator accepts in a
 * definition. So `2012-10-09T19:00:55` (no offset), `2023-02-24` (date only), a
 * space or a lowercase `t`/`z` are not timestamps; fractional seconds and `±hh:mm`
 * offsets are, and comparisons are by instant: `2012-10-09T20:00:55+01:00` equals
 * `2012-10-09T19:00:55Z`.
 */
import { compareInstants, parseInstant, type Instant } from "../core/timestamp.js";

export { compareInstants, type Instant };

/** The instant `text` denotes, or undefined when it is not a timestamp AWS accepts. */
export function parseTimestamp(text: string): Instant | undefined {
  return parseInstant(text, "rfc3339");
}

export function isTimestamp(value: unknown): boolean {
  return typeof value === "string" && parseTimestamp(value) !== undefined;
}
