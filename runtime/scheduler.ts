import { EXECUTION_ARN_PREFIX } from "./ids.js";
import type { Keys } from "./keys.js";
import type { JobQueues } from "./queues.js";
import type { RedisClient } from "./redis.js";
import type { RuntimeSettings } from "./settings.js";

/**
 * Durable timers (Wait, Retry backoff, Task TimeoutSeconds/HeartbeatSeconds, the
 * execution's TimeoutSeconds) and leases live in ONE sorted set scored by due
 * time. Every worker polls it every `timerPollMs` (sooner when the next entry is
 * due sooner) and claims due entries with `claimDue`, atomically, so each fires
 * once however many workers poll. A timer armed for a year is one sorted-set
 * member until then: no job, no process, no memory elsewhere.
 *
 * The same loop prunes the execution indexes of executions whose retention ran
 * out (see scripts/prune-index.ts).
 *
 * Why not BullMQ delayed jobs: their promotion depends on a worker's delay timer
 * and is known to fire late under load or after reconnects; a poll of a sorted
 * set bounds lateness by the poll interval plus one job pickup.
 */
/** How often each worker looks for expired executions' index entries. */
const PRUNE_EVERY_MS = 60_000;

export class Scheduler {
  private stopped = false;
  private wake: (() => void) | undefined;
  private loop: Promise<void> | undefined;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly queues: JobQueues,
    private readonly settings: RuntimeSettings,
    private readonly onError: (err: unknown) => void = () => {},
  ) {}

  start(): void {
    this.loop ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.wake?.();
    await this.loop;
  }

  /** Claims and enqueues what is due now; returns the next due time (ms) if any. */
  async tick(now = Date.now()): Promise<number | undefined> {
    const reply = await this.client.run(
      "claimDue",
      [this.keys.schedule, this.keys.tasks],
      [this.keys.base, now, 500, this.settings.leaseMs, EXECUTION_ARN_PREFIX],
    );
    const [next, ...jobs] = reply as string[];
    if (jobs.length > 0) await this.queues.ensure(jobs.join(" "));
    // A full batch means more may be due already.
    if (jobs.length >= 500) return now;
    return next ? Number(next) : undefined;
  }

  /**
   * Removes index entries of executions whose records expired, one slice per
   * call, resuming where the last call stopped. Returns how many it removed.
   */
  async prune(now = Date.now(), slice = 1000): Promise<number> {
    if (this.settings.retentionSeconds <= 0) return 0;
    const [removed, next] = (await this.client.run(
      "pruneIndex",
      [this.keys.executions],
      [this.keys.base, now - this.settings.retentionSeconds * 1000, this.pruneFrom, slice],
    )) as [number, number];
    this.pruneFrom = Number(next);
    return Number(removed);
  }

  private pruneFrom = 0;
  private nextPrune = 0;

  private async run(): Promise<void> {
    while (!this.stopped) {
      let delay = this.settings.timerPollMs;
      try {
        if (Date.now() >= this.nextPrune) {
          this.nextPrune = Date.now() + PRUNE_EVERY_MS;
          await this.prune();
        }
        const next = await this.tick();
        if (next !== undefined) delay = Math.max(0, Math.min(delay, next - Date.now()));
      } catch (err) {
        this.onError(err);
        delay = 500;
      }
      if (this.stopped) break;
      await new Promise<void>((resolve) => {
        const handle = setTimeout(resolve, delay);
        this.wake = () => {
          clearTimeout(handle);
          resolve();
        };
      });
    }
  }
}
