/**
 * Timestamps as Choice rules read them (`Timestamp*` operators and `IsTimestamp`).
 *
 * AWS "Choice workflow state" (JSONPath Choice rules): timestamps "must conform to
 * RFC3339 profile ISO 8601, with further restrictions: an uppercase T must separate
 * the date and time portions; an uppercase Z must denote that a numeric time zone
 * offset isn't present", e.g. `2016-08-18T17:33:00Z`. So `2012-10-09T19:00:55`
 * (no offset), `2023-02-24` (date only), a space or a lowercase `t`/`z` are not
 * timestamps; fractional seconds and `±hh:mm` offsets are.
 *
 * Comparisons are by instant: `2012-10-09T20:00:55+01:00` equals
 * `2012-10-09T19:00:55Z`. The parser is hand-written rather than `Date.parse`,
 * whose accepted forms are implementation-defined and which drops digits past
 * milliseconds.
 */

/** A point in time: whole seconds since the Unix epoch plus the decimal fraction. */
export interface Instant {
  readonly epochSeconds: number;
  /** Fraction-of-second digits with trailing zeros removed ("5" for .500). */
  readonly fraction: string;
}

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/;

/** The instant `text` denotes, or undefined when it is not a timestamp AWS accepts. */
export function parseTimestamp(text: string): Instant | undefined {
  const m = RFC3339.exec(text);
  if (m === null) return undefined;
  const [, y, mo, d, h, mi, s, frac, zone] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = Number(h);
  const minute = Number(mi);
  // Leap seconds (":60") are refused, as java.time's ISO offset parser refuses them.
  const second = Number(s);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const offsetSeconds = parseOffset(zone ?? "");
  if (offsetSeconds === undefined) return undefined;
  const local = daysFromCivil(year, month, day) * 86_400 + hour * 3_600 + minute * 60 + second;
  return { epochSeconds: local - offsetSeconds, fraction: (frac ?? "").replace(/0+$/, "") };
}

export function isTimestamp(value: unknown): boolean {
  return typeof value === "string" && parseTimestamp(value) !== undefined;
}

/** Negative, zero or positive as `a` is before, at or after `b`. */
export function compareInstants(a: Instant, b: Instant): number {
  if (a.epochSeconds !== b.epochSeconds) return a.epochSeconds < b.epochSeconds ? -1 : 1;
  const width = Math.max(a.fraction.length, b.fraction.length);
  const fa = a.fraction.padEnd(width, "0");
  const fb = b.fraction.padEnd(width, "0");
  return fa === fb ? 0 : fa < fb ? -1 : 1;
}

/** `Z` → 0; `+hh:mm` / `-hh:mm` → seconds east of UTC (RFC 3339 §5.6: hours ≤ 23). */
function parseOffset(zone: string): number | undefined {
  if (zone === "Z") return 0;
  const hours = Number(zone.slice(1, 3));
  const minutes = Number(zone.slice(4, 6));
  if (hours > 23 || minutes > 59) return undefined;
  return (zone.startsWith("-") ? -1 : 1) * (hours * 3_600 + minutes * 60);
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) {
    const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
    return leap ? 29 : 28;
  }
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Days since 1970-01-01 in the proleptic Gregorian calendar (H. Hinnant, "days_from_civil"). */
function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  const dayOfEra =
    yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}
