import type { ExecutionRecord, ExecutionResult, StartResult } from "../contract/index.js";
import { longId } from "../store/ids.js";
import type { RedisTarget } from "../store/redis.js";
import { Subscription } from "../store/subscription.js";

/**
 * Waiting for executions to end (`POST …/executions?wait=`) without polling Redis.
 *
 * The commit script PUBLISHes an execution's short id on `<base>ended` when the
 * execution ends (commit-transition.ts, op `end`), one channel per shard. One subscriber connection per
 * runtime listens (a subscribed connection can do nothing else) and wakes the
 * waiters of that execution, which then read the record once.
 *
 * Pub/sub is fire-and-forget: a message published while the subscriber is
 * reconnecting is gone. So a waiter also re-checks every `fallbackMs`, and every
 * waiter re-checks when the subscriber has reconnected; a lost message then costs
 * at most `fallbackMs` of extra wait, never a wrong answer.
 *
 * A re-check reads the status only (one small field, not the record with its
 * payloads), once per execution however many wait for it: concurrent checks of
 * one execution share one read. The whole record is read once, to answer.
 *
 * An end committed by this process's worker (commit/fenced-commit.ts) is told here
 * at once (`endedHere`), with its result: a waiter that asked for the result alone
 * (`waitResult`: `?wait=` answers) answers from it, without the channel's message
 * and the read. It is kept a few seconds, for a waiter that comes after it.
 */
export class EndWaiters {
  private readonly waiters = new Map<string, Set<Waiter>>();
  /**
   * The last status read of each execution and when it started: a waiter re-checking
   * within half an interval of it takes that read, so the waiters of one execution
   * cost one read per interval between them. A message drops it (the status changed).
   */
  private readonly checks = new Map<string, { at: number; read: Promise<string | null> }>();
  private readonly pending = new Set<Promise<unknown>>();
  private readonly subscription: Subscription;
  private closed = false;
  /** Ends this process committed lately, by execution (`endedHere`), oldest first. */
  private readonly recent = new Map<string, { at: number; end: ExecutionResult }>();

  constructor(
    target: RedisTarget,
    channels: readonly string[],
    private readonly fallbackMs = 1_000,
  ) {
    this.subscription = new Subscription(
      target,
      "stepwise-ended",
      channels,
      (exec) => {
        const executionId = longId(exec);
        this.checks.delete(executionId);
        const set = this.waiters.get(executionId);
        if (set) for (const waiter of set) waiter.wake(true);
      },
      () => this.wakeAll(),
    );
  }

  /**
   * Resolves with the record once the execution is no longer RUNNING, or with its
   * RUNNING record when `timeoutMs` has passed (or the runtime closes).
   */
  wait(
    executionId: string,
    timeoutMs: number,
    describe: () => Promise<ExecutionRecord>,
    /** The execution's status alone (null: no such execution). */
    status: () => Promise<string | null>,
  ): Promise<ExecutionRecord> {
    return this.track(
      this.closed ? describe() : this.run(executionId, timeoutMs, describe, status),
    );
  }

  /**
   * `wait` for the result alone (`?wait=`): an end this process committed answers
   * without a read. `started`: what this process's start answered, just now. When
   * its worker took the execution (`advancedHere`) it is RUNNING, so the first
   * status read is skipped if the subscription holds: an end committed here before
   * this call is in `recent`, and one from elsewhere could not have come yet (the
   * worker here holds its lease, and its load and commit take round trips this call
   * is ahead of).
   */
  waitResult(
    executionId: string,
    timeoutMs: number,
    reads: {
      describe(executionId: string): Promise<ExecutionResult>;
      status(executionId: string): Promise<string | null>;
    },
    started?: StartResult,
  ): Promise<ExecutionResult> {
    const describe = () => reads.describe(executionId);
    if (this.closed) return this.track(describe());
    // (A subscription not yet holding may have missed the end: then the status is read.)
    const running =
      started?.created === true && started.advancedHere === true && this.subscription.holding;
    // Only for a start just made here: an older end may have been redriven since.
    const known = running ? this.recent.get(executionId) : undefined;
    if (known) return Promise.resolve(known.end);
    const status = () => reads.status(executionId);
    return this.track(this.run(executionId, timeoutMs, describe, status, running, (end) => end));
  }

  /**
   * This process committed the end of `executionId` (commit/fenced-commit.ts): its
   * `waitResult` waiters answer from `end` now. Its channel message follows as usual,
   * for waiters here that want the whole record and for other processes.
   */
  endedHere(executionId: string, end: ExecutionResult): void {
    const now = Date.now();
    this.recent.delete(executionId);
    this.recent.set(executionId, { at: now, end });
    for (const [id, entry] of this.recent) {
      if (now - entry.at < RECENT_MS && this.recent.size <= RECENT_MAX) break;
      this.recent.delete(id);
    }
    const set = this.waiters.get(executionId);
    if (set) for (const waiter of set) waiter.wake(true, end);
  }

  private track<T>(waiting: Promise<T>): Promise<T> {
    this.pending.add(waiting);
    const forget = (): void => void this.pending.delete(waiting);
    waiting.then(forget, forget);
    return waiting;
  }

  /** Drops the subscriber connection and lets pending waits answer with the record as it is now. */
  async close(): Promise<void> {
    this.closed = true;
    // Disconnecting first also releases waits still waiting for their subscription.
    this.subscription.close();
    this.wakeAll();
    await Promise.allSettled([...this.pending]);
  }

  /**
   * `fromEnd`: answers from an end this process committed (`waitResult`); without
   * it, such an end is read like any other.
   */
  private async run<T extends { status: string }>(
    executionId: string,
    timeoutMs: number,
    describe: () => Promise<T>,
    status: () => Promise<string | null>,
    running = false,
    fromEnd?: (end: ExecutionResult) => T,
  ): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    const waiter = new Waiter();
    this.add(executionId, waiter);
    try {
      // Subscribed BEFORE the first read: an end committed between a read and the
      // subscription would otherwise go unnoticed until the fallback re-read.
      await this.subscription.ready();
      let ended = false;
      // Known RUNNING (`waitResult` says when): the first status read is skipped.
      let known = running;
      for (;;) {
        const told = waiter.told;
        if (told) return fromEnd ? fromEnd(told) : await describe();
        // Woken by its end's message: the record is read at once, without the status
        // first (RUNNING again only if redriven meanwhile: then it waits on).
        if (ended) {
          const record = await describe();
          if (record.status !== "RUNNING") return record;
        }
        const current = ended || known ? "RUNNING" : await this.check(executionId, status);
        known = false;
        const left = deadline - Date.now();
        if (current !== "RUNNING" || left <= 0 || this.closed) return await describe();
        ended = await waiter.sleep(Math.min(left, this.fallbackMs));
      }
    } finally {
      this.remove(executionId, waiter);
    }
  }

  private check(executionId: string, status: () => Promise<string | null>): Promise<string | null> {
    const now = Date.now();
    const last = this.checks.get(executionId);
    if (last && now - last.at < this.fallbackMs / 2) return last.read;
    const read = status();
    const entry = { at: now, read };
    this.checks.set(executionId, entry);
    // A failed read is not shared; nor is any read once nobody waits for the execution.
    read.catch(() => this.checks.get(executionId) === entry && this.checks.delete(executionId));
    return read;
  }

  private wakeAll(): void {
    this.checks.clear();
    for (const set of this.waiters.values()) for (const waiter of set) waiter.wake();
  }

  private add(executionId: string, waiter: Waiter): void {
    let set = this.waiters.get(executionId);
    if (!set) {
      set = new Set();
      this.waiters.set(executionId, set);
    }
    set.add(waiter);
  }

  private remove(executionId: string, waiter: Waiter): void {
    waiter.cancel();
    const set = this.waiters.get(executionId);
    if (!set) return;
    set.delete(waiter);
    if (set.size === 0) {
      this.waiters.delete(executionId);
      this.checks.delete(executionId);
    }
  }

  /** Executions with someone waiting (tests check that none is left behind). */
  get size(): number {
    return this.waiters.size;
  }
}

/** How long an end this process committed answers waiters that come after it (ms), and how many are kept. */
const RECENT_MS = 5_000;
const RECENT_MAX = 10_000;

/**
 * One waiting request. A wake that arrives while the waiter is reading the record
 * (not sleeping) is remembered, so the next sleep returns at once.
 */
export class Waiter {
  private woken = false;
  private resolve: ((woken: boolean) => void) | undefined;
  private timer: NodeJS.Timeout | undefined;
  /** The end this process committed, when it told it (`EndWaiters.endedHere`). */
  told: ExecutionResult | undefined;

  /**
   * `ended`: the execution's end was announced (false: a reconnect, a close);
   * `end`: by this process, with its result.
   */
  wake(ended = false, end?: ExecutionResult): void {
    if (end) this.told = end;
    if (this.resolve) return this.finish(ended);
    this.pending = true;
    this.woken ||= ended;
  }

  /** A wake came while not sleeping (`woken`: one of them was the end's). */
  private pending = false;

  /** Resolves true when woken by the execution's end, false on a timeout or another wake. */
  sleep(ms: number): Promise<boolean> {
    if (this.pending) {
      const ended = this.woken;
      this.pending = this.woken = false;
      return Promise.resolve(ended);
    }
    return new Promise((resolve) => {
      this.resolve = resolve;
      this.timer = setTimeout(() => this.finish(false), ms);
    });
  }

  cancel(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.resolve = undefined;
  }

  private finish(ended: boolean): void {
    const resolve = this.resolve;
    this.cancel();
    resolve?.(ended);
  }
}
