/**
 * Wall-clock time in an IANA time zone, without a time-zone library: the offset of
 * an instant comes from `Intl.DateTimeFormat`, and a wall time is turned back into
 * an instant by trying the offsets in force half a day either side.
 *
 * A "naive" time here is a wall-clock reading written as if it were UTC
 * (`Date.UTC(y, m, d, h, min, s)`), so cron matching can run in plain UTC.
 */

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(timeZone: string): Intl.DateTimeFormat {
  let f = formatters.get(timeZone);
  if (!f) {
    f = new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    formatters.set(timeZone, f);
  }
  return f;
}

/** Whether `timeZone` is an IANA name this runtime knows (`UTC` included). */
export function isTimeZone(timeZone: string): boolean {
  try {
    formatter(timeZone);
    return true;
  } catch {
    return false;
  }
}

/** The wall-clock reading of `instant` in `timeZone`, as a naive time (ms). */
export function toNaive(instant: number, timeZone: string): number {
  const parts: Record<string, number> = {};
  for (const part of formatter(timeZone).formatToParts(new Date(instant))) {
    if (part.type !== "literal") parts[part.type] = Number(part.value);
  }
  const ms = instant - Math.floor(instant / 1000) * 1000;
  return (
    Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!) +
    ms
  );
}

/**
 * The first instant whose wall-clock reading in `timeZone` is `naive`, or null when
 * that reading never happens (it falls in the hour skipped when clocks go forward).
 * A reading that happens twice (clocks go back) gives the earlier instant.
 */
export function fromNaive(naive: number, timeZone: string): number | null {
  const halfDay = 12 * 3600_000;
  const offsets = new Set([
    toNaive(naive - halfDay, timeZone) - (naive - halfDay),
    toNaive(naive + halfDay, timeZone) - (naive + halfDay),
  ]);
  const found = [...offsets]
    .map((offset) => naive - offset)
    .filter((candidate) => toNaive(candidate, timeZone) === naive);
  return found.length === 0 ? null : Math.min(...found);
}

/** `20261205T182000Z`: a tick's instant as it appears in execution names. */
export function compactUtc(instant: number): string {
  return new Date(instant)
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d{3}/, "");
}
