import type { Redis } from "ioredis";
import type { Runtime, StartResult } from "../../contract/index.js";
import { TriggerError, invalid } from "../errors.js";
import { nextTick, ticksBetween } from "./schedule-expression.js";
import {
  scheduleDefinition,
  tickInput,
  ticksAfter,
  timingOf,
  type ScheduleDefinition,
  type ScheduleInput,
  type ScheduleState,
} from "./schedule-record.js";
import type { TriggerKeys } from "../trigger-keys.js";
import { compactUtc } from "./zoned-time.js";

/** What the trigger machinery needs of the runtime: starting, reading and stopping executions. */
export type Starter = Pick<
  Runtime,
  | "startExecution"
  | "describeExecution"
  | "stopExecution"
  | "getStateMachine"
  | "sendTaskSuccess"
  | "sendTaskFailure"
>;

/** A schedule as the API answers it. */
export type ScheduleView = ScheduleDefinition & {
  nextTick?: string;
  lastTick?: string;
  lastExecution?: string;
  bufferedTick?: string;
  skippedCount: number;
  skipped: ScheduleState["skipped"];
};

/** The most ticks one backfill may start. */
export const MAX_BACKFILL_TICKS = 1000;

/**
 * Creates, replaces, reads and deletes schedules, and starts one tick. A schedule
 * is one hash (`def`, `rev`, `st`: trigger-keys.ts); the sorted set `due` holds
 * when each enabled schedule must next be looked at: the durable timer that
 * schedule-firing.ts polls.
 */
export class ScheduleStore {
  constructor(
    private readonly redis: Redis,
    private readonly keys: TriggerKeys,
    private readonly runtime: Starter,
  ) {}

  async create(name: string, input: ScheduleInput): Promise<ScheduleView> {
    const now = Date.now();
    const definition = scheduleDefinition(name, input, now);
    await this.checkTarget(definition);
    const state: ScheduleState = {
      skipped: [],
      skippedCount: 0,
      ...this.firstTick(definition, now),
    };
    const created = await this.redis.eval(
      CREATE,
      3,
      this.keys.schedule(name),
      this.keys.schedules,
      this.keys.due,
      name,
      JSON.stringify(definition),
      JSON.stringify(state),
      dueScore(definition, state),
    );
    if (created === 0)
      throw new TriggerError("ScheduleAlreadyExists", `Schedule '${name}' already exists`);
    return view(definition, state);
  }

  /** Replaces the schedule; its next tick is computed again, what past ticks did is kept. */
  async update(name: string, input: ScheduleInput): Promise<ScheduleView> {
    const current = await this.read(name);
    const now = Date.now();
    const definition = scheduleDefinition(name, input, now, current.definition.createdAt);
    await this.checkTarget(definition);
    const { next: _n, buffered: _b, ...kept } = current.state;
    const state: ScheduleState = {
      ...kept,
      ...this.firstTick(definition, now, current.state.lastTick),
    };
    const updated = await this.redis.eval(
      UPDATE,
      2,
      this.keys.schedule(name),
      this.keys.due,
      name,
      JSON.stringify(definition),
      JSON.stringify(state),
      dueScore(definition, state),
    );
    if (updated === 0) throw notFound(name);
    return view(definition, state);
  }

  async get(name: string): Promise<ScheduleView> {
    const { definition, state } = await this.read(name);
    return view(definition, state);
  }

  async list(): Promise<ScheduleView[]> {
    const names = await this.redis.zrange(this.keys.schedules, "0", "-1");
    const views: ScheduleView[] = [];
    for (const name of names) {
      try {
        views.push(await this.get(name));
      } catch (err) {
        if (!(err instanceof TriggerError)) throw err;
      }
    }
    return views;
  }

  async delete(name: string): Promise<void> {
    const deleted = await this.redis.eval(
      DELETE,
      3,
      this.keys.schedule(name),
      this.keys.schedules,
      this.keys.due,
      name,
    );
    if (deleted === 0) throw notFound(name);
  }

  /** Starts every tick in [from, to) (ALLOW_ALL: backfills ignore the overlap policy). */
  async backfill(
    name: string,
    fromMs: number,
    toMs: number,
  ): Promise<{ tick: string; executionId: string; created: boolean }[]> {
    const { definition } = await this.read(name);
    if (!(toMs > fromMs)) throw invalid("/to", "'to' must be after 'from'");
    const ticks = ticksBetween(timingOf(definition), fromMs, toMs, MAX_BACKFILL_TICKS + 1);
    if (ticks.length > MAX_BACKFILL_TICKS)
      throw invalid("/to", `the range holds more than ${MAX_BACKFILL_TICKS} ticks`);
    const started = [];
    for (const tick of ticks) {
      const result = await this.startTick(definition, tick);
      started.push({
        tick: new Date(tick).toISOString(),
        executionId: result.executionId,
        created: result.created,
      });
    }
    return started;
  }

  /**
   * Starts the execution of one tick: its name says which; starting it again finds it.
   * It is dated at the tick ($$.Execution.StartTime, its record's startedAt), however
   * late a worker fires it, so a run knows which period it covers.
   */
  startTick(definition: ScheduleDefinition, tick: number): Promise<StartResult> {
    const { stateMachine, version, alias, input } = definition.target;
    return this.runtime.startExecution(stateMachine, {
      name: tickExecutionName(definition.name, tick),
      input: tickInput(input, tick),
      startedAt: new Date(tick).toISOString(),
      caller: { name: `schedule:${definition.name}` },
      ...(version !== undefined ? { version } : {}),
      ...(alias !== undefined ? { alias } : {}),
    });
  }

  async read(
    name: string,
  ): Promise<{ definition: ScheduleDefinition; state: ScheduleState; rev: string }> {
    const [def, st, rev] = await this.redis.hmget(
      this.keys.schedule(name),
      F.definition,
      F.state,
      F.revision,
    );
    if (!def || !st || !rev) throw notFound(name);
    return {
      definition: JSON.parse(def) as ScheduleDefinition,
      state: JSON.parse(st) as ScheduleState,
      rev,
    };
  }

  /**
   * Records what a firing did, unless the schedule was replaced or deleted meanwhile
   * (`rev` moved): then the replacement's own next tick stands.
   */
  async advance(
    name: string,
    rev: string,
    state: ScheduleState,
    score: number | undefined,
  ): Promise<boolean> {
    const done = await this.redis.eval(
      ADVANCE,
      2,
      this.keys.schedule(name),
      this.keys.due,
      name,
      rev,
      JSON.stringify(state),
      score === undefined ? "" : String(score),
    );
    return done === 1;
  }

  private firstTick(
    definition: ScheduleDefinition,
    now: number,
    after?: number,
  ): Pick<ScheduleState, "next"> {
    // Its first tick at or after now (a rate without StartDate: now), or, from a past
    // StartDate, the first within the catch-up window (schedule-record.ts `ticksAfter`).
    const timing = timingOf(definition);
    const from = ticksAfter(timing, definition.catchUpWindowSeconds * 1000, now, after);
    const next = nextTick(timing, from);
    return next === null ? {} : { next };
  }

  private async checkTarget(definition: ScheduleDefinition): Promise<void> {
    // The target must exist now (it may be deleted later: those ticks fail and are logged).
    try {
      await this.runtime.getStateMachine(definition.target.stateMachine);
    } catch (err) {
      if ((err as { code?: string }).code === "StateMachineDoesNotExist")
        throw invalid(
          "/target/stateMachine",
          `state machine '${definition.target.stateMachine}' does not exist`,
        );
      throw err;
    }
  }
}

/** `<schedule>-<yyyymmddThhmmssZ>`: which schedule and which tick, within AWS's 80 characters. */
export function tickExecutionName(schedule: string, tick: number): string {
  return `${schedule}-${compactUtc(tick)}`;
}

/** When the firing loop must look at the schedule: its next tick, or never (disabled, done). */
export function dueScore(definition: ScheduleDefinition, state: ScheduleState): string {
  if (definition.state !== "ENABLED") return "";
  if (state.buffered !== undefined)
    return String(Math.min(state.next ?? Infinity, Date.now() + 1000));
  return state.next === undefined ? "" : String(state.next);
}

function view(definition: ScheduleDefinition, state: ScheduleState): ScheduleView {
  return {
    ...definition,
    ...(state.next !== undefined && definition.state === "ENABLED"
      ? { nextTick: new Date(state.next).toISOString() }
      : {}),
    ...(state.lastTick !== undefined ? { lastTick: new Date(state.lastTick).toISOString() } : {}),
    ...(state.lastExecution !== undefined ? { lastExecution: state.lastExecution } : {}),
    ...(state.buffered !== undefined
      ? { bufferedTick: new Date(state.buffered).toISOString() }
      : {}),
    skippedCount: state.skippedCount,
    skipped: state.skipped,
  };
}

function notFound(name: string): TriggerError {
  return new TriggerError("ScheduleDoesNotExist", `Schedule '${name}' does not exist`);
}

/** The fields of a schedule's hash, named once (spelled into the scripts below). */
const F = { definition: "def", state: "st", revision: "rev" } as const;

// KEYS: schedule hash, names, due. ARGV: name, def, st, due score ("" = not due). → 1 created, 0 exists.
const CREATE = `
if redis.call('exists', KEYS[1]) == 1 then return 0 end
redis.call('hset', KEYS[1], '${F.definition}', ARGV[2], '${F.state}', ARGV[3], '${F.revision}', 1)
redis.call('zadd', KEYS[2], 0, ARGV[1])
if ARGV[4] ~= '' then redis.call('zadd', KEYS[3], ARGV[4], ARGV[1]) end
return 1`;

// KEYS: schedule hash, due. ARGV: name, def, st, due score. → 1 replaced, 0 no such schedule.
const UPDATE = `
if redis.call('exists', KEYS[1]) == 0 then return 0 end
redis.call('hset', KEYS[1], '${F.definition}', ARGV[2], '${F.state}', ARGV[3])
redis.call('hincrby', KEYS[1], '${F.revision}', 1)
if ARGV[4] ~= '' then redis.call('zadd', KEYS[2], ARGV[4], ARGV[1]) else redis.call('zrem', KEYS[2], ARGV[1]) end
return 1`;

// KEYS: schedule hash, names, due. ARGV: name. → 1 deleted, 0 no such schedule.
const DELETE = `
local n = redis.call('del', KEYS[1])
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('zrem', KEYS[3], ARGV[1])
return n`;

// KEYS: schedule hash, due. ARGV: name, rev read, st, due score. → 1 recorded, 0 the schedule changed.
const ADVANCE = `
if redis.call('hget', KEYS[1], '${F.revision}') ~= ARGV[2] then return 0 end
redis.call('hset', KEYS[1], '${F.state}', ARGV[3])
if ARGV[4] ~= '' then redis.call('zadd', KEYS[2], ARGV[4], ARGV[1]) else redis.call('zrem', KEYS[2], ARGV[1]) end
return 1`;
