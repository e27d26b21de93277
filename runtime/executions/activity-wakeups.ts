import type { RedisTarget } from "../store/redis.js";
import { Subscription } from "../store/subscription.js";
import { Waiter } from "./waiters.js";

/**
 * Long polls of activities (GetActivityTask, up to 60 s) that wait without
 * polling Redis. The commit that adds a task to an activity's list PUBLISHes the
 * activity's name on its shard's channel (store/scripts/commit-transition.ts); one
 * subscriber connection per runtime wakes that activity's polls, which then
 * look at the lists again. Between tasks a poll costs one look per `fallbackMs`
 * (a message lost to a reconnect is found then), not one every 50 ms on every shard.
 */
export class ActivityWakeups {
  private readonly watchers = new Map<string, Set<Waiter>>();
  private readonly subscription: Subscription;
  private closed = false;

  constructor(
    target: RedisTarget,
    channels: readonly string[],
    readonly fallbackMs = 1_000,
  ) {
    this.subscription = new Subscription(
      target,
      "stepwise-activities",
      channels,
      (activity) => this.wake(this.watchers.get(activity)),
      () => this.wakeAll(),
    );
  }

  /**
   * Watches an activity from now on: a task added after this resolves wakes the
   * watch's next sleep (or the sleep under way). Look at the lists after
   * watching, not before, and nothing added in between is missed.
   */
  async watch(activity: string): Promise<ActivityWatch> {
    if (!this.closed) await this.subscription.ready();
    const waiter = new Waiter();
    let set = this.watchers.get(activity);
    if (!set) this.watchers.set(activity, (set = new Set()));
    set.add(waiter);
    if (this.closed) waiter.wake();
    return {
      sleep: (ms) => (this.closed ? Promise.resolve() : waiter.sleep(ms).then(() => {})),
      closed: () => this.closed,
      close: () => {
        waiter.cancel();
        set.delete(waiter);
        if (set.size === 0 && this.watchers.get(activity) === set) this.watchers.delete(activity);
      },
    };
  }

  /** Drops the subscriber connection and wakes every poll (each answers on its next look). */
  close(): void {
    this.closed = true;
    this.subscription.close();
    this.wakeAll();
  }

  /** Activities with a poll watching (tests check that none is left behind). */
  get size(): number {
    return this.watchers.size;
  }

  private wake(set: Set<Waiter> | undefined): void {
    if (set) for (const waiter of set) waiter.wake();
  }

  private wakeAll(): void {
    for (const set of this.watchers.values()) this.wake(set);
  }
}

export interface ActivityWatch {
  /** Resolves when a task may have been added, or after `ms`, or at once once closed. */
  sleep(ms: number): Promise<void>;
  /** The runtime is closing: the poll answers "no task" rather than look again. */
  closed(): boolean;
  close(): void;
}
