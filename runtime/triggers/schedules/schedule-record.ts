import type { Json } from "../../../engine/core/json.js";
import {
  ExpressionError,
  checkTimeZone,
  parseExpression,
  type Timing,
} from "./schedule-expression.js";
import { invalid } from "../errors.js";
import type { OverlapPolicy } from "./overlap.js";

/** What a client sends to create or replace a schedule (the REST body). */
export interface ScheduleInput {
  target: { stateMachine: string; version?: number; alias?: string; input?: Json };
  scheduleExpression: string;
  scheduleExpressionTimezone?: string;
  startDate?: string;
  endDate?: string;
  state?: "ENABLED" | "DISABLED";
  overlapPolicy?: OverlapPolicy;
  catchUpWindowSeconds?: number;
  description?: string;
}

/** A schedule as stored: its input with defaults filled in, and when it was made. */
export type ScheduleDefinition = ScheduleInput &
  Required<
    Pick<
      ScheduleInput,
      "scheduleExpressionTimezone" | "state" | "overlapPolicy" | "catchUpWindowSeconds"
    >
  > & {
    name: string;
    createdAt: string;
    updatedAt: string;
  };

export interface SkippedTick {
  tick: string;
  /**
   * `missed`: older than the catch-up window when looked at; `overlap`: the previous
   * run was still going; `failed`: the runtime refused the start (`error` says why).
   */
  reason: "missed" | "overlap" | "failed";
  error?: string;
}

/** What the ticks did: written by the workers that fire them. */
export interface ScheduleState {
  /** The next tick not yet handled (ms), absent when none is left. */
  next?: number;
  /** A tick kept by BUFFER_ONE until the running execution ends (ms). */
  buffered?: number;
  lastTick?: number;
  lastExecution?: string;
  /** The most recent skipped ticks (newest last, at most `SKIPPED_KEPT`). */
  skipped: SkippedTick[];
  skippedCount: number;
}

export const SKIPPED_KEPT = 50;
/** Catch-up window when a schedule names none: ticks up to 5 minutes late still start. */
export const DEFAULT_CATCH_UP_SECONDS = 300;
/** The longest schedule name: its execution names append `-yyyymmddThhmmssZ` (17) within AWS's 80. */
export const SCHEDULE_NAME_PATTERN = "^[0-9A-Za-z_.-]{1,63}$";

/** Checks what a schedule says beyond its JSON shape; a bad field is a 400 naming it. */
export function scheduleDefinition(
  name: string,
  input: ScheduleInput,
  now: number,
  createdAt?: string,
): ScheduleDefinition {
  const timeZone = input.scheduleExpressionTimezone ?? "UTC";
  const definition: ScheduleDefinition = {
    ...input,
    name,
    scheduleExpressionTimezone: timeZone,
    state: input.state ?? "ENABLED",
    overlapPolicy: input.overlapPolicy ?? "SKIP",
    catchUpWindowSeconds: input.catchUpWindowSeconds ?? DEFAULT_CATCH_UP_SECONDS,
    createdAt: createdAt ?? new Date(now).toISOString(),
    updatedAt: new Date(now).toISOString(),
  };
  try {
    timingOf(definition);
  } catch (err) {
    if (err instanceof ExpressionError) throw invalid(`/${lowerFirst(err.field)}`, err.message);
    throw err;
  }
  if (input.target.version !== undefined && input.target.alias !== undefined)
    throw invalid("/target/alias", "a target names a version or an alias, not both");
  return definition;
}

function lowerFirst(text: string): string {
  return text[0]!.toLowerCase() + text.slice(1);
}

function instant(field: "StartDate" | "EndDate", text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) throw new ExpressionError(field, `'${text}' is not a date-time`);
  return ms;
}

/** The timing of a stored schedule (schedule-expression.ts). */
export function timingOf(definition: ScheduleDefinition): Timing {
  const expression = parseExpression(definition.scheduleExpression);
  checkTimeZone(definition.scheduleExpressionTimezone);
  const startMs = instant("StartDate", definition.startDate);
  const endMs = instant("EndDate", definition.endDate);
  if (startMs !== undefined && endMs !== undefined && endMs <= startMs)
    throw new ExpressionError("EndDate", "EndDate must be after StartDate");
  // A rate counts from StartDate, else from creation, to the whole second.
  const anchorMs = Math.floor((startMs ?? Date.parse(definition.createdAt)) / 1000) * 1000;
  return {
    expression,
    timeZone: definition.scheduleExpressionTimezone,
    ...(startMs !== undefined ? { startMs } : {}),
    ...(endMs !== undefined ? { endMs } : {}),
    anchorMs,
  };
}

/**
 * The instant a new or replaced schedule's ticks come after (`nextTick`'s `afterMs`):
 * now, or the last tick a replaced schedule handled if later. A StartDate in the
 * past reaches back as far as the catch-up window: those ticks are due at once and
 * the first firing treats them as ticks missed while the service was down (each
 * started or skipped by the overlap policy). Ticks before the window predate the
 * schedule; they are not missed, and not recorded.
 */
export function ticksAfter(timing: Timing, catchUpMs: number, now: number, after?: number): number {
  const from =
    timing.startMs !== undefined && timing.startMs < now
      ? Math.max(timing.startMs, now - catchUpMs)
      : now;
  return Math.max(from - 1, after ?? -Infinity);
}

/** The input of the execution a tick starts: an object input gets `scheduledTime` (unless it has one). */
export function tickInput(input: Json | undefined, tick: number): Json {
  const scheduledTime = new Date(tick).toISOString();
  if (input === undefined) return { scheduledTime };
  if (input !== null && typeof input === "object" && !Array.isArray(input)) {
    return "scheduledTime" in input ? input : { ...input, scheduledTime };
  }
  return input;
}
