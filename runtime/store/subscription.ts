import type { Redis } from "ioredis";
import { openRedis, type RedisTarget } from "./redis.js";

/**
 * One pub/sub connection of a runtime, subscribed to a fixed set of channels (a
 * subscribed connection can do nothing else). Opened on first use; `ready`
 * settles once the subscription holds, and a failed one is retried by the next
 * `ready` call.
 *
 * Pub/sub is fire-and-forget: what is published while the connection is
 * reconnecting is gone. ioredis subscribes again after a reconnect, and
 * `onReconnect` runs then, so its users re-read what they wait for: a lost
 * message costs them at most their fallback interval, never a wrong answer.
 */
export class Subscription {
  private subscriber: Redis | undefined;
  private subscribing: Promise<unknown> | undefined;
  private held = false;

  /**
   * The subscription holds now: whatever is published from now on reaches
   * `onMessage` (false before the first subscribe settles and from a disconnect
   * until the subscribe after the reconnect settles).
   */
  get holding(): boolean {
    return this.held;
  }

  constructor(
    private readonly target: RedisTarget,
    private readonly name: string,
    private readonly channels: readonly string[],
    private readonly onMessage: (message: string) => void,
    private readonly onReconnect: () => void,
  ) {}

  ready(): Promise<unknown> {
    if (this.subscribing) return this.subscribing;
    const subscriber = openRedis(this.target, this.name);
    // Connection errors are retried (retryStrategy); the users' fallbacks cover the gap.
    subscriber.on("error", () => {});
    subscriber.on("message", (_channel: string, message: string) => this.onMessage(message));
    let connections = 0;
    subscriber.on("close", () => (this.held = false));
    subscriber.on("ready", () => {
      if (++connections === 1) return;
      this.onReconnect();
      // ioredis subscribes again by itself; this one says when that holds.
      subscriber.subscribe(...this.channels).then(
        () => (this.held = this.subscriber === subscriber),
        () => {},
      );
    });
    this.subscriber = subscriber;
    this.subscribing = subscriber.subscribe(...this.channels).then(
      () => (this.held = this.subscriber === subscriber),
      () => {
        // Without a subscription the fallbacks still answer; try again on the next use.
        this.subscribing = undefined;
        if (this.subscriber === subscriber) this.subscriber = undefined;
        subscriber.disconnect();
      },
    );
    return this.subscribing;
  }

  close(): void {
    this.held = false;
    this.subscriber?.disconnect();
    this.subscriber = undefined;
  }
}
