import { parseInstant } from "../engine/core/timestamp.js";

/**
 * ASL spec, "Timestamps": an RFC 3339 date-time "with the further restrictions that
 * an uppercase T must separate the date and time portions, and an uppercase Z must
 * denote that a numeric time zone offset is not present" (2016-03-14T01:59:00Z).
 * AWS refuses the rest at creation: "String does not match RFC3339 timestamp".
 * The engine's profile (engine/core/timestamp.ts), so what passes here runs: a
 * leap second (`:60`), which no instant can hold, is refused here too.
 */
export function isRfc3339Timestamp(text: string): boolean {
  return parseInstant(text, "rfc3339") !== undefined;
}
