import { Cron } from "croner";
import { fromNaive, isTimeZone, toNaive } from "./zoned-time.js";

/**
 * Schedule expressions in EventBridge Scheduler's syntax
 * (https://docs.aws.amazon.com/scheduler/latest/UserGuide/schedule-types.html):
 *
 * - `at(yyyy-mm-ddThh:mm:ss)`: once, at that wall-clock time in the schedule's zone;
 * - `rate(value unit)`: every `value` minutes, hours or days (a day is 24 hours, as
 *   EventBridge Scheduler counts it), from StartDate (else from when it was created);
 * - `cron(minutes hours day-of-month month day-of-week year)`: EventBridge's six
 *   fields, day-of-week 1–7 = SUN–SAT, exactly one of day-of-month and day-of-week
 *   `?`, with `L`, `W` and `#`. Matched by croner in its Quartz (7-part) mode on the
 *   wall clock; the wall time is then placed in the zone the way EventBridge
 *   documents for daylight saving time: a time skipped when clocks go forward is not
 *   run, a time that happens twice when clocks go back runs once (the first).
 *
 * Pure: no clock, no I/O. Every function takes the instants it works from.
 */

export class ExpressionError extends Error {
  constructor(
    /** Which field of the schedule is wrong. */
    readonly field: "ScheduleExpression" | "ScheduleExpressionTimezone" | "StartDate" | "EndDate",
    message: string,
  ) {
    super(message);
    this.name = "ExpressionError";
  }
}

export type ScheduleExpression =
  { kind: "at"; naive: number } | { kind: "rate"; everyMs: number } | { kind: "cron"; cron: Cron };

/** What decides a schedule's ticks. */
export interface Timing {
  expression: ScheduleExpression;
  timeZone: string;
  /** Ticks before it are not run (recurring schedules only, as EventBridge). */
  startMs?: number;
  /** Ticks at or after it are not run (recurring schedules only). */
  endMs?: number;
  /** Where a rate counts from: StartDate, else when the schedule was created. */
  anchorMs: number;
}

const UNITS: Record<string, number> = {
  minute: 60_000,
  minutes: 60_000,
  hour: 3_600_000,
  hours: 3_600_000,
  day: 86_400_000,
  days: 86_400_000,
};

/** Each cron field: the characters EventBridge allows in it. */
const CRON_FIELDS: { name: string; allowed: RegExp }[] = [
  { name: "minutes", allowed: /^[0-9,\-*/]+$/ },
  { name: "hours", allowed: /^[0-9,\-*/]+$/ },
  { name: "day-of-month", allowed: /^(\?|[0-9,\-*/LW]+)$/ },
  { name: "month", allowed: /^[0-9A-Za-z,\-*/]+$/ },
  { name: "day-of-week", allowed: /^(\?|[0-9A-Za-z,\-*L#]+)$/ },
  { name: "year", allowed: /^[0-9,\-*/]+$/ },
];

export function parseExpression(text: string): ScheduleExpression {
  const bad = (reason: string) => new ExpressionError("ScheduleExpression", reason);
  const match = /^(at|rate|cron)\((.*)\)$/.exec(text.trim());
  if (!match) throw bad(`'${text}' is not at(...), rate(...) or cron(...)`);
  const body = match[2]!.trim();
  if (match[1] === "at") {
    const at = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})$/.exec(body);
    if (!at) throw bad(`at(${body}): expected at(yyyy-mm-ddThh:mm:ss)`);
    const [y, mo, d, h, mi, s] = at.slice(1).map(Number) as [
      number,
      number,
      number,
      number,
      number,
      number,
    ];
    const naive = Date.UTC(y, mo - 1, d, h, mi, s);
    const check = new Date(naive);
    if (check.getUTCMonth() !== mo - 1 || check.getUTCDate() !== d || h > 23 || mi > 59 || s > 59)
      throw bad(`at(${body}) is not a valid date and time`);
    return { kind: "at", naive };
  }
  if (match[1] === "rate") {
    const rate = /^(\d+)\s+([a-z]+)$/.exec(body);
    const unit = rate ? UNITS[rate[2]!] : undefined;
    if (!rate || unit === undefined || Number(rate[1]) < 1)
      throw bad(
        `rate(${body}): expected rate(value unit), value a positive integer, unit minutes, hours or days`,
      );
    return { kind: "rate", everyMs: Number(rate[1]) * unit };
  }
  const fields = body.split(/\s+/);
  if (fields.length !== 6)
    throw bad(
      `cron(${body}) has ${fields.length} fields; EventBridge's has 6: minutes hours day-of-month month day-of-week year`,
    );
  fields.forEach((field, i) => {
    const spec = CRON_FIELDS[i]!;
    if (!spec.allowed.test(field))
      throw bad(`cron(${body}): '${field}' is not a valid ${spec.name} field`);
  });
  const [min, hour, dom, month, dow, year] = fields as [
    string,
    string,
    string,
    string,
    string,
    string,
  ];
  if ((dom === "?") === (dow === "?"))
    throw bad(`cron(${body}): exactly one of day-of-month and day-of-week must be '?'`);
  const pattern = [0, min, hour, dom === "?" ? "*" : dom, month, quartzWeekday(dow), year].join(
    " ",
  );
  try {
    const cron = new Cron(pattern, {
      timezone: "UTC",
      mode: "7-part",
      alternativeWeekdays: true,
      domAndDow: true,
      // EventBridge writes steps from a start value (`0/15`), as Quartz does.
      sloppyRanges: true,
    });
    return { kind: "cron", cron };
  } catch (err) {
    throw bad(`cron(${body}): ${(err as Error).message}`);
  }
}

/** EventBridge's day-of-week to croner's Quartz form: `?` any, `L` Saturday, `6L` the last Friday. */
function quartzWeekday(dow: string): string {
  if (dow === "?") return "*";
  if (dow === "L") return "7";
  return dow.replace(/^([1-7A-Za-z]+)L$/, "$1#L");
}

/** Validates a time-zone name (IANA), the way ScheduleExpressionTimezone is checked. */
export function checkTimeZone(timeZone: string): void {
  if (!isTimeZone(timeZone))
    throw new ExpressionError(
      "ScheduleExpressionTimezone",
      `'${timeZone}' is not an IANA time zone`,
    );
}

/** The first tick strictly after `afterMs`, or null when there is none (an at() past, EndDate). */
export function nextTick(timing: Timing, afterMs: number): number | null {
  const { expression, timeZone } = timing;
  if (expression.kind === "at") {
    const at = placeWall(expression.naive, timeZone);
    return at > afterMs ? at : null;
  }
  const from = Math.max(afterMs, (timing.startMs ?? -Infinity) - 1);
  let tick: number | null;
  if (expression.kind === "rate") {
    const k = Math.max(0, Math.floor((from - timing.anchorMs) / expression.everyMs) + 1);
    tick = timing.anchorMs + k * expression.everyMs;
  } else {
    tick = nextCron(expression.cron, from, timeZone);
  }
  if (tick === null || (timing.endMs !== undefined && tick >= timing.endMs)) return null;
  return tick;
}

/** Ticks in [fromMs, toMs), at most `limit` of them. */
export function ticksBetween(
  timing: Timing,
  fromMs: number,
  toMs: number,
  limit: number,
): number[] {
  const ticks: number[] = [];
  let tick = nextTick(timing, fromMs - 1);
  while (tick !== null && tick < toMs && ticks.length < limit) {
    ticks.push(tick);
    tick = nextTick(timing, tick);
  }
  return ticks;
}

/**
 * The next cron match after `afterMs`: the pattern runs on the wall clock (naive
 * times); each match is placed in the zone, skipped when it does not exist (the
 * hour clocks jump over) or when it is not after `afterMs` (its first occurrence was
 * earlier: the hour clocks repeat runs once).
 */
function nextCron(cron: Cron, afterMs: number, timeZone: string): number | null {
  let naive = toNaive(afterMs, timeZone);
  for (let i = 0; i < 10_000; i++) {
    const next = cron.nextRun(new Date(naive));
    if (!next) return null;
    naive = next.getTime();
    const instant = fromNaive(naive, timeZone);
    if (instant !== null && instant > afterMs) return instant;
  }
  return null;
}

/** A one-time wall time placed in the zone; one in a skipped hour runs when the clock reaches it. */
function placeWall(naive: number, timeZone: string): number {
  for (let shift = 0; shift <= 3 * 3600_000; shift += 60_000) {
    const instant = fromNaive(naive + shift, timeZone);
    if (instant !== null) return instant;
  }
  return naive;
}
