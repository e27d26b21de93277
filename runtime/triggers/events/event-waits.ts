import { compileExpression } from "../../../engine/jsonata/compile.js";
import { evaluateHere } from "../../../engine/drivers/heavy-steps.js";
import type { Redis } from "ioredis";
import type { Json } from "../../../engine/core/json.js";
import { RuntimeError, type Runtime } from "../../contract/index.js";
import { checkPattern, matches, type EventPattern } from "./event-pattern.js";
import type { BusEvent } from "./event-bus.js";
import type { TriggerKeys } from "../trigger-keys.js";
import { FIRST_CHECK_MS, nextCheckAt, stillRuns } from "./waiter-liveness.js";

/**
 * Executions waiting for an event (`arn:aws:states:::stepwise:waitForEvent`).
 *
 * The Task calls its runner with a task token (event-wait-runner.ts), which
 * `register`s a waiter: the token, `Pattern` (an EventBridge pattern) and/or
 * `Match` (a JSONata predicate over `$event` and `$input`, the task's Parameters),
 * a deadline (`TimeoutSeconds`) and a lookback (`LookbackSeconds`: events accepted
 * up to that long before the wait began count, so one sent just before is not
 * missed). The execution then waits on its token.
 *
 * Each event put on the bus is `offer`ed to the waiters indexed under its source
 * and detail-type (a waiter is indexed by the exact values its Pattern names,
 * `*` otherwise), never to every waiter. A waiter that matches is claimed in one
 * atomic step (it leaves its index, and its result goes to the `waitAnswers`
 * outbox), so it takes at most one event, while one event may satisfy every
 * waiter it matches. The task is then answered through its token: the event is
 * the task's result, or the error `Stepwise.EventTimeout` at the deadline. An
 * answer whose sender died is sent again from the outbox by the workers' loop.
 *
 * A waiter whose execution ended otherwise (stopped, timed out, failed elsewhere)
 * is dropped from the indexes by the same loop (`sweep`, waiter-liveness.ts), so
 * the indexes hold only executions that still wait.
 */

export { isEventWait as isEventWaitResource } from "../../../task-runners/resources.js";

export const EVENT_TIMEOUT = "Stepwise.EventTimeout";

/** What a waitForEvent task's Parameters say. */
export interface WaitParameters {
  Pattern?: EventPattern;
  Match?: string;
  TimeoutSeconds?: number;
  LookbackSeconds?: number;
}

interface Waiter {
  token: string;
  executionId: string;
  pattern?: EventPattern;
  match?: string;
  input: Json;
  /** The index keys it is in. */
  index: string[];
  /** When it was registered (ms): its liveness looks back off with its age. */
  since?: number;
}

type WaitResult = { kind: "event"; event: BusEvent } | { kind: "timeout"; seconds: number };

/** An answer a deliverer sends at once; the outbox sends it after this if it did not. */
const ANSWER_AGAIN_MS = 5_000;
/** Events looked at for a lookback, at most (newest within the window). */
const LOOKBACK_LIMIT = 10_000;

/** Checks a wait's Parameters; the message says what is wrong (the task fails with it). */
export function checkWaitParameters(input: Json): WaitParameters {
  if (input === null || typeof input !== "object" || Array.isArray(input))
    throw new Error("Parameters must be an object with Pattern and/or Match");
  const p = input as Record<string, Json>;
  if (p.Pattern === undefined && p.Match === undefined)
    throw new Error(
      "Parameters need a Pattern (an EventBridge event pattern) and/or a Match (JSONata)",
    );
  if (p.Pattern !== undefined) {
    const problems = checkPattern(p.Pattern);
    if (problems.length > 0)
      throw new Error(`Pattern${problems[0]!.pointer}: ${problems[0]!.message}`);
  }
  if (p.Match !== undefined) {
    if (typeof p.Match !== "string") throw new Error("Match is a JSONata expression (a string)");
    try {
      compileExpression(unbrace(p.Match));
    } catch (err) {
      throw new Error(`Match does not parse: ${(err as { message?: string }).message}`);
    }
  }
  for (const field of ["TimeoutSeconds", "LookbackSeconds"] as const) {
    const v = p[field];
    if (v !== undefined && (typeof v !== "number" || !Number.isFinite(v) || v < 0))
      throw new Error(`${field} is a number of seconds, at least 0`);
  }
  return p as WaitParameters;
}

/** `{% expr %}` or `expr`: the expression. */
function unbrace(match: string): string {
  const m = /^\{%([\s\S]*)%\}$/.exec(match.trim());
  return m ? m[1]! : match;
}

export class EventWaits {
  constructor(
    private readonly redis: Redis,
    private readonly keys: TriggerKeys,
  ) {}

  /**
   * Registers a waiter, then looks back: the oldest event within `LookbackSeconds`
   * that matches is taken at once (its answer is queued for the workers' loop, which
   * sends it once the task has recorded that it waits).
   */
  async register(
    token: string,
    executionId: string,
    params: WaitParameters,
    now = Date.now(),
  ): Promise<void> {
    const index = indexKeys(params.Pattern).map(([s, t]) => this.keys.waiterIndex(s, t));
    const waiter: Waiter = {
      token,
      executionId,
      ...(params.Pattern !== undefined ? { pattern: params.Pattern } : {}),
      ...(params.Match !== undefined ? { match: params.Match } : {}),
      input: params as unknown as Json,
      index,
      since: now,
    };
    const multi = this.redis
      .multi()
      .set(this.keys.waiter(token), JSON.stringify(waiter))
      .zadd(this.keys.waitChecks, now + FIRST_CHECK_MS, token);
    for (const key of index) multi.sadd(key, token);
    if (params.TimeoutSeconds !== undefined)
      multi.zadd(this.keys.waitDeadlines, now + params.TimeoutSeconds * 1000, token);
    await multi.exec();
    if (params.LookbackSeconds) {
      const ids = await this.redis.zrangebyscore(
        this.keys.events,
        now - params.LookbackSeconds * 1000,
        "+inf",
        "LIMIT",
        0,
        LOOKBACK_LIMIT,
      );
      for (const id of ids) {
        const text = await this.redis.get(this.keys.event(id));
        if (!text) continue;
        const { acceptedAt: _a, ...event } = JSON.parse(text) as BusEvent & { acceptedAt: number };
        if (await this.accepts(waiter, event)) {
          // Answered by the loop shortly after: the task records that it waits first.
          await this.claim(waiter, { kind: "event", event }, now + 300);
          return;
        }
      }
    }
  }

  /** Offers an event to the waiters indexed under its source and detail-type; answers those it matches. */
  async offer(event: BusEvent, runtime: Answerer): Promise<number> {
    const s = event.source;
    const t = event["detail-type"];
    const tokens = await this.redis.sunion(
      this.keys.waiterIndex(s, t),
      this.keys.waiterIndex(s, "*"),
      this.keys.waiterIndex("*", t),
      this.keys.waiterIndex("*", "*"),
    );
    let taken = 0;
    for (const token of tokens) {
      const text = await this.redis.get(this.keys.waiter(token));
      if (!text) continue;
      const waiter = JSON.parse(text) as Waiter;
      if (!(await this.accepts(waiter, event))) continue;
      if (await this.claim(waiter, { kind: "event", event }, Date.now() + ANSWER_AGAIN_MS)) {
        taken++;
        await this.answer(token, runtime);
      }
    }
    return taken;
  }

  /**
   * The workers' loop: waits past their deadline time out; answers whose sender died
   * are sent; waiters of ended executions leave.
   */
  async due(runtime: Sweeper, now = Date.now()): Promise<void> {
    const expired = await this.dueIn(this.keys.waitDeadlines, now);
    for (const token of expired) {
      const text = await this.redis.get(this.keys.waiter(token));
      if (!text) {
        await this.redis.zrem(this.keys.waitDeadlines, token);
        continue;
      }
      const waiter = JSON.parse(text) as Waiter;
      const seconds = (waiter.input as WaitParameters).TimeoutSeconds ?? 0;
      await this.claim(waiter, { kind: "timeout", seconds }, now);
    }
    const answers = await this.dueIn(this.keys.waitAnswers, now);
    for (const token of answers) await this.answer(token, runtime);
    await this.sweep(runtime, now);
  }

  /**
   * Looks at the waiters due a liveness look: one whose execution no longer runs (or
   * is gone) leaves its indexes, its deadline and its key; the others are looked at
   * again later (waiter-liveness.ts). A waiter taken meanwhile is left to its claim.
   */
  async sweep(runtime: Sweeper, now = Date.now()): Promise<number> {
    const tokens = await this.dueIn(this.keys.waitChecks, now);
    let dropped = 0;
    for (const token of tokens) {
      const text = await this.redis.get(this.keys.waiter(token));
      if (!text) {
        await this.redis.zrem(this.keys.waitChecks, token);
        continue;
      }
      const waiter = JSON.parse(text) as Waiter;
      let runs: boolean;
      try {
        runs = stillRuns((await runtime.describeExecution(waiter.executionId)).status);
      } catch (err) {
        // Purged (or expired past retention): nobody waits. Anything else is tried again.
        if (!(err instanceof RuntimeError && err.code === "ExecutionDoesNotExist")) throw err;
        runs = false;
      }
      if (runs) {
        // Only while the waiter is still there (XX): a claim meanwhile removed it.
        await this.redis.zadd(
          this.keys.waitChecks,
          "XX",
          nextCheckAt(waiter.since ?? now, now),
          token,
        );
      } else if (await this.drop(waiter)) dropped++;
    }
    return dropped;
  }

  /** The tokens of a sorted set due at `now` (a pass takes 100 at most; the next one goes on). */
  private dueIn(key: string, now: number): Promise<string[]> {
    return this.redis.zrangebyscore(key, "-inf", now, "LIMIT", 0, 100);
  }

  /** Whether the loop has waits to time out or answers to send now. */
  async pending(now: number): Promise<boolean> {
    const [[, deadlines], [, answers], [, checks]] = (await this.redis
      .multi()
      .zcount(this.keys.waitDeadlines, "-inf", now)
      .zcount(this.keys.waitAnswers, "-inf", now)
      .zcount(this.keys.waitChecks, "-inf", now)
      .exec()) as [[null, number], [null, number], [null, number]];
    return deadlines > 0 || answers > 0 || checks > 0;
  }

  private async accepts(waiter: Waiter, event: BusEvent): Promise<boolean> {
    if (waiter.pattern && !matches(waiter.pattern, event as unknown as Json)) return false;
    if (waiter.match === undefined) return true;
    try {
      // The engine's compiled form: cached, and held to the JSONata budget
      // (engine/jsonata/limits.ts); past the serving thread's slice it runs on the
      // evaluation thread (runtime/offload/), so a costly Match cannot stall the publisher.
      const result: unknown = await evaluateHere(
        unbrace(waiter.match),
        {},
        {
          event: event as unknown as Json,
          input: waiter.input as Json,
        },
      );
      return result === true;
    } catch {
      return false;
    }
  }

  /** Takes the waiter (once: 1), queuing its result; another took it first: 0. */
  private async claim(waiter: Waiter, result: WaitResult, answerAt: number): Promise<boolean> {
    const done = await this.redis.eval(
      CLAIM,
      5 + waiter.index.length,
      this.keys.waiter(waiter.token),
      this.keys.waitDeadlines,
      this.keys.waitAnswers,
      this.keys.waitResults,
      this.keys.waitChecks,
      ...waiter.index,
      waiter.token,
      JSON.stringify(result),
      answerAt,
    );
    return done === 1;
  }

  /** Removes a waiter nobody answers any more (1), unless a claim took it first (0). */
  private async drop(waiter: Waiter): Promise<boolean> {
    const done = await this.redis.eval(
      DROP,
      3 + waiter.index.length,
      this.keys.waiter(waiter.token),
      this.keys.waitDeadlines,
      this.keys.waitChecks,
      ...waiter.index,
      waiter.token,
    );
    return done === 1;
  }

  /** Answers the task of a decided wait, then drops the answer from the outbox. */
  private async answer(token: string, runtime: Answerer): Promise<void> {
    const text = await this.redis.hget(this.keys.waitResults, token);
    if (text) {
      const result = JSON.parse(text) as WaitResult;
      try {
        if (result.kind === "event")
          await runtime.sendTaskSuccess(token, result.event as unknown as Json);
        else
          await runtime.sendTaskFailure(
            token,
            EVENT_TIMEOUT,
            `No matching event arrived within ${result.seconds} seconds`,
          );
      } catch (err) {
        // The execution ended or was stopped meanwhile: nobody waits any more.
        if (!(err instanceof RuntimeError)) throw err;
      }
    }
    await this.redis
      .multi()
      .hdel(this.keys.waitResults, token)
      .zrem(this.keys.waitAnswers, token)
      .exec();
  }
}

export type Answerer = Pick<Runtime, "sendTaskSuccess" | "sendTaskFailure">;
/** What the workers' loop needs besides answering: whether a waiter's execution still runs. */
export type Sweeper = Answerer & Pick<Runtime, "describeExecution">;

/** The index keys of a pattern: its exact sources × exact detail-types (`*` for none). */
function indexKeys(pattern: EventPattern | undefined): [string, string][] {
  const exact = (field: string): string[] => {
    const values = pattern?.[field];
    return Array.isArray(values) && values.length > 0 && values.every((v) => typeof v === "string")
      ? (values as string[])
      : ["*"];
  };
  return exact("source").flatMap((s) => exact("detail-type").map((t): [string, string] => [s, t]));
}

// KEYS: waiter, deadlines, answers, results, checks, index sets…. ARGV: token, result JSON, answer at (ms).
// → 1: the waiter was taken by this call; 0: it was gone (taken or removed).
const CLAIM = `
if redis.call('del', KEYS[1]) == 0 then return 0 end
for i = 6, #KEYS do redis.call('srem', KEYS[i], ARGV[1]) end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('zrem', KEYS[5], ARGV[1])
redis.call('hset', KEYS[4], ARGV[1], ARGV[2])
redis.call('zadd', KEYS[3], ARGV[3], ARGV[1])
return 1`;

// KEYS: waiter, deadlines, checks, index sets…. ARGV: token.
// → 1: removed by this call; 0: it was gone (a claim took it).
const DROP = `
if redis.call('del', KEYS[1]) == 0 then return 0 end
for i = 4, #KEYS do redis.call('srem', KEYS[i], ARGV[1]) end
redis.call('zrem', KEYS[2], ARGV[1])
redis.call('zrem', KEYS[3], ARGV[1])
return 1`;
