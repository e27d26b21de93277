import type { RunEventBody } from "../../engine/core/events.js";
import { eventTemplate } from "../store/event-template.js";
import { EXECUTION_ARN_PREFIX, executionOf } from "../store/ids.js";
import { parseJob, stepJob } from "../store/job-ids.js";
import type { Keys } from "../store/keys.js";
import type { JobQueues } from "./queues.js";
import { ActiveExecutions, LeaseRenewal, leaseNow, RunOverflow } from "./run-overflow.js";
import type { RedisClient } from "../store/redis.js";
import { claimDue } from "../store/scripts/claim-due.js";
import type { LoadSnapshot } from "../store/scripts/load-transition.js";
import { RECORD_FIELDS } from "../commit/execution-cache.js";
import { pruneIndex } from "../store/scripts/prune-index.js";
import { EXECUTION_STATUSES } from "../contract/index.js";
import type { RuntimeSettings } from "../settings.js";

/** The statuses whose records expire (runtime/settings.ts `retentionSeconds`). */
const ENDED_STATUSES = EXECUTION_STATUSES.filter((s) => s !== "RUNNING" && s !== "PAUSED");

/** What a fired timer delivers to its run; the script puts in the timer's id. */
const TIMER_FIRED = eventTemplate({ type: "TimerFired", timerId: "" }, "timerId");
/** What the execution's own timeout delivers. */
const TIMED_OUT = JSON.stringify({
  type: "Stop",
  status: "TIMED_OUT",
  error: "States.Timeout",
  cause: "",
} satisfies RunEventBody);

/**
 * Durable timers (Wait, Retry backoff, Task TimeoutSeconds/HeartbeatSeconds, the
 * execution's TimeoutSeconds) and leases live in ONE sorted set scored by due
 * time. Every worker polls it every `timerPollMs` (sooner when the next entry is
 * due sooner) and claims due entries with `claimDue`, atomically, so each fires
 * once however many workers poll. A timer armed for a year is one sorted-set
 * member until then: no job, no process, no memory elsewhere.
 *
 * Bursts (issue 21: 50,000 executions waiting on one timestamp): while entries
 * are still due the loop claims again at once, never sleeping in between, and
 * every worker process claims in parallel (claims are disjoint: `claimDue`
 * removes what it hands out). A worker fires what it claimed itself (`fire`,
 * the same `advance` a step job runs) instead of enqueueing one BullMQ job per
 * run: that job's add, fetch and completion cost Redis more than the transition
 * itself. It claims only as much as it has room to fire, so the others take
 * their share. The claim hands out each fired run as it loaded it (when the
 * timer's event is its only one), so that fire starts with the step: no load of
 * its own, and the commit's fences catch whatever changed in between. Its loads
 * and commits go out batched, one EVALSHA per script per tick (redis.ts).
 * Nothing is lost if the process dies meanwhile: `claimDue` put a
 * lease (`r:<run>`) in the schedule for every run it handed out, and the next
 * claim after the lease enqueues the run's job. A fire that throws goes to the
 * queue too, where retries and give-up (give-up.ts) deal with it.
 *
 * The same loop prunes the execution indexes of executions whose retention ran
 * out (see store/scripts/prune-index.ts).
 *
 * Why not BullMQ delayed jobs: their promotion depends on a worker's delay timer
 * and is known to fire late under load or after reconnects; a poll of a sorted
 * set bounds lateness by the poll interval plus one job pickup.
 */
/** How often each worker looks for expired executions' index entries. */
const PRUNE_EVERY_MS = 60_000;
/** Most entries one `claimDue` call hands out (its Lua runs ~5 commands per entry). */
const CLAIM_MAX = 1000;

/** Without work for this long, a process's watch polls at the idle rate. */
const IDLE_AFTER_MS = 2_000;
/** The idle rate: how soon an idle process sees an entry another process armed due within a second. */
const IDLE_POLL_MS = 250;

/**
 * One poll for the idle schedules of every shard a worker serves. A shard's loop
 * with nothing due soon waits here instead of running its claim script every
 * `timerPollMs`: each poll reads the first entry of every waiting schedule in one
 * round trip and wakes the loops whose entry is due. 16 idle shards cost one timer
 * and 16 cheap reads per poll instead of 16 scripts.
 *
 * The watch only discovers entries armed sooner than a loop's own next wake (each
 * loop sleeps until its schedule's first entry, at most a second, and learns of
 * later ones then). Such an entry is armed by a commit, and the commit's process is
 * busy: it polls every `timerPollMs` (20 ms) while it has done work in the last
 * `IDLE_AFTER_MS`, so what it arms fires that late at most. A process without work
 * polls every `IDLE_POLL_MS` instead: at 20 ms, an idle `serve` sent Redis 800 reads
 * a second and spent 6% of a core on them, for entries that its busy peers (or its
 * own next wake) take on time anyway. What an idle process can still be late for,
 * by up to 250 ms: an entry due within a second, armed by a process that then
 * stopped (an API-only process's start with `TimeoutSeconds` under 1).
 */
export class ScheduleWatch {
  private readonly waiting = new Map<string, Set<() => void>>();
  private timer: NodeJS.Timeout | undefined;
  /** When the timer was set for, so a busy() can bring an idle poll forward. */
  private pollAt = 0;
  private lastBusy = 0;

  constructor(
    private readonly client: RedisClient,
    private readonly pollMs: number,
  ) {}

  /** This process is doing work (a transition, a fire, a task): poll at the busy rate. */
  busy(): void {
    const now = Date.now();
    this.lastBusy = now;
    if (this.timer !== undefined && this.pollAt > now + this.pollMs) this.schedule(this.pollMs);
  }

  /** Calls `due` once `schedule`'s first entry is due; the returned function cancels. */
  onDue(schedule: string, due: () => void): () => void {
    let set = this.waiting.get(schedule);
    if (!set) this.waiting.set(schedule, (set = new Set()));
    set.add(due);
    if (this.timer === undefined) this.schedule(this.interval());
    return () => {
      set.delete(due);
      if (set.size === 0 && this.waiting.get(schedule) === set) this.waiting.delete(schedule);
    };
  }

  private interval(): number {
    return Date.now() - this.lastBusy < IDLE_AFTER_MS
      ? this.pollMs
      : Math.max(this.pollMs, IDLE_POLL_MS);
  }

  private schedule(ms: number): void {
    clearTimeout(this.timer);
    this.pollAt = Date.now() + ms;
    this.timer = setTimeout(() => void this.poll(), ms);
  }

  private async poll(): Promise<void> {
    this.timer = undefined;
    const schedules = [...this.waiting.keys()];
    try {
      const heads = await Promise.all(
        schedules.map((key) => this.client.redis.zrange(key, "0", "0", "WITHSCORES")),
      );
      const now = Date.now();
      heads.forEach((head, i) => {
        if (head.length < 2 || Number(head[1]) > now) return;
        for (const due of this.waiting.get(schedules[i]!) ?? []) due();
      });
    } catch {
      // Redis away: the loops' own timeouts bring them back to their claims.
    }
    // A busy() during the poll may have set the next one already.
    if (this.timer === undefined && this.waiting.size > 0 && !this.closed) {
      this.schedule(this.interval());
    }
  }

  private closed = false;

  close(): void {
    this.closed = true;
    clearTimeout(this.timer);
    this.timer = undefined;
  }
}

/** Longest a loop waits on the watch before it claims again anyway (leases, pruning). */
const WATCHED_MAX_WAIT_MS = 1_000;

export interface SchedulerOptions {
  /** Shared idle polling over the shards a worker serves (see `ScheduleWatch`). */
  watch?: ScheduleWatch;
  /**
   * Advances run `run` at seq `seq` in this process (a worker's `advance`), from
   * the snapshot the claim took when it has one; without it, jobs are enqueued.
   */
  fire?: (run: string, seq: number, snapshot?: LoadSnapshot) => Promise<unknown>;
  /** Runs fired at once in this process (default 64). */
  concurrency?: number;
}

/** A run waiting for a firing slot, at the seq to advance it from (with its claim's snapshot of it). */
interface Waiting {
  run: string;
  seq: number;
  snapshot?: LoadSnapshot | undefined;
  /** When its lease in the schedule was last known renewed (ms): run-overflow.ts. */
  since: number;
}

export class Scheduler {
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  /** Claimed runs waiting for a firing slot, and the slots in use. */
  private backlog: Waiting[] = [];
  /**
   * Runs of executions active here taken past the room (`take`): they go after the
   * backlog, so that claims (timers, leases) keep their room and their turn.
   */
  private readonly overflow = new RunOverflow<Waiting>();
  /** The backlog's entry of each run: one per run, at its latest seq. */
  private readonly waiting = new Map<string, Waiting>();
  /** Runs being advanced, with the latest seq a commit woke them at meanwhile. */
  private readonly running = new Map<string, { again: number | undefined }>();
  private firing = 0;
  /** Runs waiting or being advanced here, by execution (`take`). */
  private readonly active = new ActiveExecutions();
  private readonly leases: LeaseRenewal;
  private handsFull = false;
  private drained: (() => void) | undefined;
  private readonly concurrency: number;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly queues: JobQueues,
    private readonly settings: RuntimeSettings,
    private readonly onError: (err: unknown) => void = () => {},
    private readonly options: SchedulerOptions = {},
  ) {
    this.concurrency = options.concurrency ?? 64;
    this.leases = new LeaseRenewal(client, keys, settings.leaseMs);
  }

  start(): void {
    this.loop ??= this.run();
  }

  /**
   * Stops claiming; what was claimed but not fired yet goes to the queue, and
   * fires under way get `graceMs` to finish (one still running after that is
   * left to its lease).
   */
  async stop(graceMs = 10_000): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
    const left = this.backlog.splice(0).map((w) => stepJob(w.run, w.seq));
    // The overflow (thousands of a wide Map's runs) is not worth a job each: their
    // leases fall due now, and the schedule hands them to the other workers' claims.
    const spilled = this.overflow.drain();
    for (const w of this.waiting.values()) this.active.leave(w.run);
    this.waiting.clear();
    if (left.length > 0) await this.queues.ensure(left.join(" ")).catch(this.onError);
    await leaseNow(this.client, this.keys, spilled).catch(this.onError);
    if (this.firing === 0) return;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      new Promise<void>((resolve) => (this.drained = resolve)),
      new Promise<void>((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
  }

  /**
   * Claims what is due now (at most `max` entries) and fires or enqueues it;
   * returns the next due time (ms) if any, `now` when more may be due already.
   */
  async tick(now = Date.now(), max = CLAIM_MAX): Promise<number | undefined> {
    const { jobs, next, loaded } = await this.client.call(
      claimDue,
      { schedule: this.keys.schedule, tasks: this.keys.tasks },
      {
        base: this.keys.base,
        now,
        max,
        leaseMs: this.settings.leaseMs,
        timerFired: TIMER_FIRED,
        timedOut: TIMED_OUT,
        idPrefix: EXECUTION_ARN_PREFIX,
        // Fired here: the runs come loaded, and their first transition reads nothing more.
        snapshots: this.options.fire ? { recordFields: RECORD_FIELDS } : undefined,
      },
    );
    if (this.options.fire) {
      // Task calls stay jobs: they may be slow and have their own queue.
      const tasks = jobs.filter((j) => parseJob(j)?.kind !== "step");
      for (const job of jobs) {
        const step = parseJob(job);
        if (step?.kind === "step") this.enter(step.run, step.seq, loaded?.[step.run]);
      }
      this.pump();
      if (tasks.length > 0) await this.queues.ensure(tasks.join(" "));
    } else if (jobs.length > 0) {
      await this.queues.ensure(jobs.join(" "));
    }
    // A full batch means more may be due already.
    if (jobs.length >= max) return now;
    return next;
  }

  /**
   * Removes index entries of executions whose records expired, one slice per
   * call, resuming where the last call stopped. Only ended executions expire, so
   * the slices walk the ended statuses' indexes in turn. Returns how many it removed.
   */
  async prune(now = Date.now(), slice = 1000): Promise<number> {
    if (this.settings.retentionSeconds <= 0) return 0;
    let removed = 0;
    // One pass over the ended statuses at most: each stops at its cutoff or a full slice.
    for (let i = 0; i < ENDED_STATUSES.length; i++) {
      const status = ENDED_STATUSES[this.pruneStatus]!;
      const reply = await this.client.call(
        pruneIndex,
        { index: this.keys.executionsByStatus(status) },
        {
          base: this.keys.base,
          status,
          cutoff: now - this.settings.retentionSeconds * 1000,
          from: this.pruneFrom,
          count: slice,
        },
      );
      removed += reply.removed;
      this.pruneFrom = reply.next;
      if (reply.next !== 0) break;
      this.pruneStatus = (this.pruneStatus + 1) % ENDED_STATUSES.length;
    }
    return removed;
  }

  private pruneFrom = 0;
  private pruneStatus = 0;
  private nextPrune = 0;

  /**
   * Takes a run a commit of this process gave events to (transition.ts
   * `callHere`) into the fires, when they have room as they have for a claim;
   * false: its job goes to the queue. A closing scheduler takes none. A run of an
   * execution active here (`keep`, or other runs of it waiting or advancing) is
   * taken whatever the room, into the overflow: see run-overflow.ts for why.
   */
  take(run: string, seq: number, snapshot?: LoadSnapshot, keep = false): boolean {
    if (!this.options.fire || this.stopped) return false;
    this.options.watch?.busy();
    const known = this.running.has(run) || this.waiting.has(run);
    const full = !known && this.backlog.length + this.firing >= 2 * this.concurrency;
    const mine = keep || this.active.count(run) > 0;
    // Another execution's run: room counts what this process holds past it too.
    const held = this.overflow.size;
    if (!known && !mine && this.backlog.length + held + this.firing >= 2 * this.concurrency)
      return false;
    this.enter(run, seq, snapshot, full);
    this.pump();
    return true;
  }

  /** Runs of `run`'s execution other than `run` wait or advance here (transition.ts: a spent budget). */
  siblingsOf(run: string): boolean {
    return this.active.count(run) > (this.running.has(run) || this.waiting.has(run) ? 1 : 0);
  }

  /**
   * Once per run: the children of a Map wake their parent as each ends, and one
   * advance of the parent takes all the events it finds (it chains, see
   * transition.ts). A run being advanced is marked to go once more when that
   * ends, from the latest seq, for events that came after its last commit; a
   * waiting one moves to the latest seq. One advance per wake would find all
   * but the first stale.
   */
  private enter(run: string, seq: number, snapshot?: LoadSnapshot, spill = false): void {
    const busy = this.running.get(run);
    if (busy) {
      busy.again = Math.max(busy.again ?? seq, seq);
      return;
    }
    const queued = this.waiting.get(run);
    if (queued) {
      // Committed since the claim's snapshot: it is stale (at its seq it still holds).
      if (seq > queued.seq) queued.snapshot = undefined;
      queued.seq = Math.max(queued.seq, seq);
      return;
    }
    const entry = { run, seq, snapshot, since: Date.now() };
    this.waiting.set(run, entry);
    (spill ? this.overflow : this.backlog).push(entry);
    this.active.enter(run);
  }

  /** Starts fires while slots are free; a freed slot wakes the loop to claim more. */
  private pump(): void {
    const fire = this.options.fire!;
    while (this.firing < this.concurrency) {
      const step = this.backlog.shift() ?? this.overflow.next();
      if (!step) break;
      this.waiting.delete(step.run);
      const busy = { again: undefined as number | undefined };
      this.running.set(step.run, busy);
      this.firing++;
      fire(step.run, step.seq, step.snapshot)
        .catch(() => this.queues.ensure(stepJob(step.run, step.seq)))
        .catch(this.onError)
        .finally(() => {
          this.running.delete(step.run);
          this.active.leave(step.run);
          if (busy.again !== undefined) {
            if (this.stopped) this.queues.ensure(stepJob(step.run, busy.again)).catch(this.onError);
            else this.enter(step.run, busy.again);
          }
          this.firing--;
          this.pump();
          // Half the backlog gone: claim the next batch (not one entry per ended fire).
          if (this.handsFull && this.backlog.length <= this.concurrency / 2) this.wake?.();
          if (this.firing === 0) this.drained?.();
        });
    }
  }

  /** How many entries this worker may claim now: room for one more round of fires. */
  private room(): number {
    if (!this.options.fire) return CLAIM_MAX;
    return Math.min(CLAIM_MAX, 2 * this.concurrency - this.backlog.length - this.firing);
  }

  private async run(): Promise<void> {
    const poll = this.settings.timerPollMs;
    const watch = this.options.watch;
    while (!this.stopped) {
      // With a watch, the loop sleeps until its next entry (at most a second) and
      // the watch wakes it sooner when an earlier one is armed.
      let delay = watch ? WATCHED_MAX_WAIT_MS : poll;
      try {
        if (Date.now() >= this.nextPrune) {
          this.nextPrune = Date.now() + PRUNE_EVERY_MS;
          await this.prune();
        }
        await this.leases.renew(this.waiting);
        // Full hands (no room, or a batch of the room's size): an ending fire wakes the loop.
        const room = this.room();
        const now = Date.now();
        const next = room > 0 ? await this.tick(now, room) : undefined;
        this.handsFull = room <= 0 || (next === now && room < CLAIM_MAX);
        if (next !== undefined) delay = Math.max(0, Math.min(delay, next - Date.now()));
      } catch (err) {
        this.onError(err);
        delay = 500;
      }
      if (this.stopped) break;
      if (delay === 0) continue;
      await new Promise<void>((resolve) => {
        let release: (() => void) | undefined;
        const done = (): void => {
          clearTimeout(handle);
          release?.();
          this.wake = undefined;
          resolve();
        };
        const handle = setTimeout(done, delay);
        if (watch && delay > poll) release = watch.onDue(this.keys.schedule, done);
        this.wake = done;
      });
    }
  }
}
