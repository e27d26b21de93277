import { executionOf, MEMBER_KINDS } from "../store/ids.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";

/**
 * What a scheduler (scheduler.ts) holds past its room: the runs of executions it is
 * advancing other runs of (a wide Map's iterations, the parent they wake), and the
 * leases that keep them its own while they wait.
 *
 * Such a run is taken whatever the room: it waits here for a slot, its lease in the
 * schedule renewed meanwhile (`renewLeases`), so that its commit stays in the process
 * that commits its siblings (issue 43). Handed to the queue, a wide Map's overflow
 * cost a BullMQ job each (about 40 Redis commands) and was advanced by other
 * processes, whose commits then raced this one's on the execution's history fence
 * and stepped again (commit/commit-locks.ts): two workers were slower than one.
 * Processes share work by execution: a run of one not active here needs room, else
 * the queue gives it to whichever worker has some. If this process dies, the leases
 * of what it held run out and the schedule hands the runs to another.
 */

/** How many runs of each execution wait or advance in this process. */
export class ActiveExecutions {
  private readonly counts = new Map<string, number>();

  /** How many runs of `run`'s execution are here (`run` itself included, if it is). */
  count(run: string): number {
    return this.counts.get(executionOf(run)) ?? 0;
  }

  enter(run: string): void {
    const exec = executionOf(run);
    this.counts.set(exec, (this.counts.get(exec) ?? 0) + 1);
  }

  /** A run left this process's fires (advanced, or handed to the queue). */
  leave(run: string): void {
    const exec = executionOf(run);
    const n = (this.counts.get(exec) ?? 1) - 1;
    if (n > 0) this.counts.set(exec, n);
    else this.counts.delete(exec);
  }
}

/** A first-in first-out queue without `shift` (a wide Map's is tens of thousands long). */
export class RunOverflow<T> {
  private items: T[] = [];
  /** The first entry still waiting. */
  private at = 0;

  get size(): number {
    return this.items.length - this.at;
  }

  push(item: T): void {
    this.items.push(item);
  }

  next(): T | undefined {
    const item = this.items[this.at];
    if (item === undefined) return undefined;
    this.at++;
    if (this.at >= this.items.length) this.clear();
    else if (this.at >= 4096 && this.at * 2 >= this.items.length) {
      this.items = this.items.slice(this.at);
      this.at = 0;
    }
    return item;
  }

  /** Everything still waiting, in order; the queue is empty after. */
  drain(): T[] {
    const left = this.items.slice(this.at);
    this.clear();
    return left;
  }

  private clear(): void {
    this.items = [];
    this.at = 0;
  }
}

/** A run waiting here, and when its lease in the schedule was last known renewed (ms). */
export interface LeasedRun {
  run: string;
  since: number;
}

/**
 * Pushes out the leases of runs that have waited here for a slot for half a lease,
 * every quarter lease at most: one ZADD per thousand runs. XX: never re-adds a lease
 * a commit dropped; now + a lease is later than any lease written before. A wide
 * Map's iterations can wait longer than a lease behind each other; without it, the
 * schedule would hand them to other workers while this one still holds them.
 */
export class LeaseRenewal {
  private next = 0;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly leaseMs: number,
  ) {}

  async renew(waiting: Map<string, LeasedRun>, now = Date.now()): Promise<void> {
    if (now < this.next || waiting.size === 0) return;
    this.next = now + this.leaseMs / 4;
    const due = [...waiting.values()].filter((w) => w.since <= now - this.leaseMs / 2);
    for (const w of due) w.since = now;
    await setLeases(this.client, this.keys, due, now + this.leaseMs);
  }
}

/** Brings the leases of `runs` forward to now (XX: only those still held): a closing worker's. */
export function leaseNow(client: RedisClient, keys: Keys, runs: LeasedRun[]): Promise<void> {
  return setLeases(client, keys, runs, Date.now());
}

async function setLeases(
  client: RedisClient,
  keys: Keys,
  runs: LeasedRun[],
  at: number,
): Promise<void> {
  for (let i = 0; i < runs.length; i += 1000) {
    const args: (string | number)[] = [];
    for (const w of runs.slice(i, i + 1000)) args.push(at, MEMBER_KINDS.run + w.run);
    await client.redis.zadd(keys.schedule, "XX", ...args);
  }
}
