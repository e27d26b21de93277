import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import { catchUp, decideOverlap } from "./overlap.js";
import { nextTick, type Timing } from "./schedule-expression.js";
import { RuntimeError } from "../../contract/index.js";
import { crashPoint } from "../../worker/crash.js";
import {
  SKIPPED_KEPT,
  timingOf,
  type ScheduleDefinition,
  type ScheduleState,
  type SkippedTick,
} from "./schedule-record.js";
import { dueScore, type ScheduleStore, type Starter } from "./schedule-store.js";
import type { TriggerKeys } from "../trigger-keys.js";

/** Ticks handled in one firing at most (a long outage's backlog is worked off over several). */
const TICKS_PER_FIRING = 100;
/** How long a worker holds a schedule while firing it; a worker that dies frees it after this. */
export const CLAIM_MS = 5_000;

/**
 * Fires the schedules that are due: for each, under a short claim, the ticks up to
 * now are split by the catch-up window, each tick within it follows the overlap
 * policy, and what happened is recorded with the next tick (`advance`, fenced by
 * the schedule's revision).
 *
 * Exactly one execution per tick, whatever the workers do: the execution's name is
 * derived from the schedule and the tick (`tickExecutionName`), and a start of an
 * existing name with the same input finds the execution. A worker that dies after
 * starting a tick and before recording it leaves the tick due; whoever fires it
 * next starts the same name again, which starts nothing.
 */
export class ScheduleFiring {
  constructor(
    private readonly redis: Redis,
    private readonly keys: TriggerKeys,
    private readonly store: ScheduleStore,
    private readonly runtime: Starter,
  ) {}

  /** Names of the schedules due at `now`. */
  due(now: number, limit = 50): Promise<string[]> {
    return this.redis.zrangebyscore(this.keys.due, "-inf", now, "LIMIT", 0, limit);
  }

  async fire(name: string, now = Date.now()): Promise<void> {
    const token = randomUUID();
    const claim = this.keys.claim(name);
    if ((await this.redis.set(claim, token, "PX", CLAIM_MS, "NX")) !== "OK") return;
    try {
      await this.fireClaimed(name, now);
    } finally {
      await this.redis.eval(RELEASE, 1, claim, token);
    }
  }

  private async fireClaimed(name: string, now: number): Promise<void> {
    let read;
    try {
      read = await this.store.read(name);
    } catch {
      await this.redis.zrem(this.keys.due, name);
      return;
    }
    const { definition, rev } = read;
    const state: ScheduleState = { ...read.state, skipped: [...read.state.skipped] };
    if (definition.state !== "ENABLED") {
      await this.store.advance(name, rev, state, undefined);
      return;
    }
    const timing = timingOf(definition);
    const ticks = dueTicks(timing, state.next, now);
    const { due, missed } = catchUp(ticks, now, definition.catchUpWindowSeconds * 1000);
    for (const tick of missed) skip(state, tick, "missed");
    let running = state.lastExecution !== undefined && (await this.isRunning(state.lastExecution));
    if (state.buffered !== undefined && !running) {
      await this.start(definition, state, state.buffered);
      delete state.buffered;
      running = true;
    }
    for (const tick of due) {
      const decision = decideOverlap(definition.overlapPolicy, {
        previousRunning: running,
        buffered: state.buffered !== undefined,
      });
      if (decision === "skip") skip(state, tick, "overlap");
      else if (decision === "buffer") state.buffered = tick;
      else {
        if (decision === "cancel-then-start") await this.stop(state.lastExecution!, name);
        await this.start(definition, state, tick);
        running = true;
      }
    }
    const last = ticks.at(-1);
    if (last !== undefined) {
      state.lastTick = last;
      const next = nextTick(timing, last);
      if (next === null) delete state.next;
      else state.next = next;
    }
    const score = dueScore(definition, state);
    await this.store.advance(name, rev, state, score === "" ? undefined : Number(score));
  }

  /**
   * Starts a tick's execution. A start the runtime refuses (the target was deleted,
   * the input is too large) is recorded as a failed tick rather than retried forever.
   */
  private async start(
    definition: ScheduleDefinition,
    state: ScheduleState,
    tick: number,
  ): Promise<void> {
    try {
      const result = await this.store.startTick(definition, tick);
      // Test hook: the process that created the tick's execution dies before recording it.
      if (result.created) crashPoint("afterTickStarted");
      state.lastExecution = result.executionId;
    } catch (err) {
      if (!(err instanceof RuntimeError)) throw err;
      skip(state, tick, "failed", `${err.code}: ${err.message}`);
    }
  }

  private async isRunning(executionId: string): Promise<boolean> {
    try {
      const record = await this.runtime.describeExecution(executionId);
      return record.status === "RUNNING" || record.status === "PAUSED";
    } catch {
      return false;
    }
  }

  private async stop(executionId: string, schedule: string): Promise<void> {
    try {
      await this.runtime.stopExecution(executionId, {
        error: "Stepwise.ScheduleOverlap",
        cause: `Stopped by schedule '${schedule}' (CANCEL_OTHER) to start its next tick`,
        caller: { name: `schedule:${schedule}` },
      });
    } catch {
      // Ended meanwhile: nothing to cancel.
    }
  }
}

/** The ticks from the pending one up to now (at most TICKS_PER_FIRING). */
export function dueTicks(timing: Timing, pending: number | undefined, now: number): number[] {
  const ticks: number[] = [];
  let tick = pending ?? null;
  while (tick !== null && tick <= now && ticks.length < TICKS_PER_FIRING) {
    ticks.push(tick);
    tick = nextTick(timing, tick);
  }
  return ticks;
}

function skip(
  state: ScheduleState,
  tick: number,
  reason: SkippedTick["reason"],
  error?: string,
): void {
  state.skipped.push({ tick: new Date(tick).toISOString(), reason, ...(error ? { error } : {}) });
  if (state.skipped.length > SKIPPED_KEPT)
    state.skipped.splice(0, state.skipped.length - SKIPPED_KEPT);
  state.skippedCount++;
}

// KEYS: claim. ARGV: token. Deletes the claim only if it is still this firing's.
const RELEASE = `
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0`;
