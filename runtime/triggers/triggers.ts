import type { Redis } from "ioredis";
import {
  EventBus,
  type Delivery,
  type PutEventsEntry,
  type PutEventsResultEntry,
} from "./events/event-bus.js";
import { EventWaits } from "./events/event-waits.js";
import { RuleStore } from "./events/rule-store.js";
import { ScheduleFiring } from "./schedules/schedule-firing.js";
import { ScheduleStore, type Starter } from "./schedules/schedule-store.js";
import { triggerKeys, type TriggerKeys } from "./trigger-keys.js";

/** How long accepted events (and entry Ids) are kept when nothing says otherwise: 24 hours. */
export const DEFAULT_EVENT_RETENTION_SECONDS = 86_400;

export interface TriggerOptions {
  prefix: string;
  /** `STEPWISE_EVENT_RETENTION_HOURS`, in seconds. */
  eventRetentionSeconds?: number;
  /** Where a failed delivery or firing is reported (default: nowhere; it is retried). */
  onError?: (err: unknown) => void;
}

/**
 * What starts executions by itself: schedules, rules and the event bus, over the
 * runtime's Redis connection and its `startExecution`. The API's runtime answers
 * the routes with it; every worker process runs `tick` in its loop
 * (trigger-loop.ts), firing due schedules and delivering events whose deliverer died.
 */
export class Triggers {
  readonly keys: TriggerKeys;
  readonly schedules: ScheduleStore;
  readonly rules: RuleStore;
  readonly bus: EventBus;
  readonly firing: ScheduleFiring;
  readonly waits: EventWaits;
  private readonly onError: (err: unknown) => void;

  constructor(
    redis: Redis,
    private readonly runtime: Starter,
    options: TriggerOptions,
  ) {
    this.keys = triggerKeys(options.prefix);
    this.schedules = new ScheduleStore(redis, this.keys, runtime);
    this.rules = new RuleStore(redis, this.keys, runtime);
    const retention = (options.eventRetentionSeconds ?? DEFAULT_EVENT_RETENTION_SECONDS) * 1000;
    this.waits = new EventWaits(redis, this.keys);
    this.bus = new EventBus(redis, this.keys, runtime, retention, this.waits);
    this.firing = new ScheduleFiring(redis, this.keys, this.schedules, runtime);
    this.onError = options.onError ?? (() => {});
  }

  /**
   * PutEvents: stores the entries (outbox included), then delivers the accepted ones
   * here. A delivery that fails stays in the outbox; a worker delivers it later.
   */
  async publish(entries: PutEventsEntry[]): Promise<PutEventsResultEntry[]> {
    const { results, accepted } = await this.bus.put(entries);
    if (accepted.length > 0) {
      try {
        const rules = await this.rules.list();
        for (const eventId of accepted) await this.bus.deliver(eventId, rules);
      } catch (err) {
        this.onError(err);
      }
    }
    return results;
  }

  /** One pass of the workers' loop: due schedules, overdue deliveries, waits timed out or unanswered. */
  async tick(now = Date.now()): Promise<{ fired: string[]; delivered: Delivery[] }> {
    const fired = await this.firing.due(now);
    for (const name of fired) await this.firing.fire(name, now);
    const overdue = await this.bus.overdue(now);
    const delivered: Delivery[] = [];
    if (overdue.length > 0) {
      const rules = await this.rules.list();
      for (const eventId of overdue) delivered.push(await this.bus.deliver(eventId, rules));
    }
    await this.waits.due(this.runtime, now);
    return { fired, delivered };
  }
}
