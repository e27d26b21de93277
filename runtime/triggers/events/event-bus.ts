import { randomUUID } from "node:crypto";
import type { Redis } from "ioredis";
import type { Json } from "../../../engine/core/json.js";
import { RuntimeError } from "../../contract/index.js";
import { invalid } from "../errors.js";
import { matches } from "./event-pattern.js";
import type { Answerer, EventWaits } from "./event-waits.js";
import { ruleInput, type RuleDefinition } from "./rule-record.js";
import type { Starter } from "../schedules/schedule-store.js";
import type { TriggerKeys } from "../trigger-keys.js";

/** One PutEvents entry (EventBridge's shape), with Stepwise's `Id` for senders that retry. */
export interface PutEventsEntry {
  Source: string;
  DetailType: string;
  /** A JSON object, as text. */
  Detail: string;
  Time?: string;
  Resources?: string[];
  /** Stepwise: an entry with an `Id` already accepted within retention is answered with its first EventId. */
  Id?: string;
}

export type PutEventsResultEntry =
  { EventId: string } | { ErrorCode: string; ErrorMessage: string };

/** An event as stored and matched: EventBridge's envelope. */
export interface BusEvent {
  version: "0";
  id: string;
  "detail-type": string;
  source: string;
  time: string;
  resources: string[];
  detail: Json;
}

/** EventBridge's limit on one entry (PutEvents: 256 KiB). */
export const MAX_ENTRY_BYTES = 256 * 1024;
export const MAX_ENTRIES = 10;
/** An event still in the outbox this long after it was accepted is delivered again (its deliverer died). */
export const REDELIVER_AFTER_MS = 5_000;

/** What happened to one event's delivery, for logs and tests. */
export interface Delivery {
  started: { rule: string; executionId: string; created: boolean }[];
  failed: { rule: string; error: string }[];
  /** Parked waitForEvent tasks the event answered. */
  waitersTaken?: number;
}

/**
 * The event bus: PutEvents-shaped events are stored for the retention window, and
 * each is put in the outbox in the same atomic write; delivering it (matching the
 * rules, starting their targets) happens at once in the accepting process and, if
 * that process dies first, in a worker that finds it still in the outbox
 * (`REDELIVER_AFTER_MS`). A delivery starts `<rule>-<event id>`, so delivering twice
 * starts nothing twice, and offers the event to the parked waitForEvent tasks
 * (event-waits.ts), each of which takes at most one event.
 */
export class EventBus {
  constructor(
    private readonly redis: Redis,
    private readonly keys: TriggerKeys,
    private readonly runtime: Pick<Starter, "startExecution"> & Answerer,
    private readonly retentionMs: number,
    private readonly waits: EventWaits,
  ) {}

  /** Checks the whole request first (an entry over 256 KiB refuses it), then stores each entry. */
  async put(
    entries: PutEventsEntry[],
  ): Promise<{ results: PutEventsResultEntry[]; accepted: string[] }> {
    entries.forEach((entry, i) => {
      const size = Buffer.byteLength(JSON.stringify(entry));
      if (size > MAX_ENTRY_BYTES)
        throw invalid(
          `/Entries/${i}`,
          `entry ${i} is ${size} bytes; an entry is at most ${MAX_ENTRY_BYTES} bytes (256 KiB)`,
        );
    });
    const results: PutEventsResultEntry[] = [];
    const accepted: string[] = [];
    for (const entry of entries) {
      let detail: Json;
      try {
        detail = JSON.parse(entry.Detail) as Json;
      } catch {
        results.push({ ErrorCode: "MalformedDetail", ErrorMessage: "Detail is not valid JSON" });
        continue;
      }
      if (detail === null || typeof detail !== "object" || Array.isArray(detail)) {
        results.push({ ErrorCode: "MalformedDetail", ErrorMessage: "Detail is not a JSON object" });
        continue;
      }
      const now = Date.now();
      const time = entry.Time !== undefined ? Date.parse(entry.Time) : now;
      if (Number.isNaN(time)) {
        results.push({ ErrorCode: "InvalidArgument", ErrorMessage: "Time is not a date-time" });
        continue;
      }
      const id = randomUUID();
      const event: BusEvent = {
        version: "0",
        id,
        "detail-type": entry.DetailType,
        source: entry.Source,
        time: new Date(time).toISOString().replace(/\.\d{3}Z$/, "Z"),
        resources: entry.Resources ?? [],
        detail,
      };
      const eventId = await this.store(event, now, entry.Id);
      results.push({ EventId: eventId });
      if (eventId === id) accepted.push(id);
    }
    return { results, accepted };
  }

  /** Stores an event and its outbox entry at once; an `Id` seen within retention answers its first EventId. */
  private async store(event: BusEvent, now: number, entryId: string | undefined): Promise<string> {
    const keys = [this.keys.event(event.id), this.keys.events, this.keys.outbox];
    if (entryId !== undefined) keys.push(this.keys.entryId(entryId));
    const reply = await this.redis.eval(
      PUT_EVENT,
      keys.length,
      ...keys,
      event.id,
      JSON.stringify({ ...event, acceptedAt: now }),
      now,
      this.retentionMs,
    );
    return String(reply);
  }

  async get(eventId: string): Promise<(BusEvent & { acceptedAt: number }) | undefined> {
    const text = await this.redis.get(this.keys.event(eventId));
    return text ? (JSON.parse(text) as BusEvent & { acceptedAt: number }) : undefined;
  }

  /** Events accepted within retention, newest first; `before` is the cursor (an acceptance time, ms). */
  async list(
    options: { limit?: number; before?: number } = {},
  ): Promise<{ items: (BusEvent & { acceptedAt: string })[]; nextCursor?: string }> {
    const limit = Math.max(1, Math.min(options.limit ?? 100, 1000));
    const now = Date.now();
    await this.redis.zremrangebyscore(this.keys.events, "-inf", now - this.retentionMs);
    const max = options.before !== undefined ? `(${options.before}` : "+inf";
    const rows = await this.redis.zrevrangebyscore(
      this.keys.events,
      max,
      "-inf",
      "WITHSCORES",
      "LIMIT",
      0,
      limit + 1,
    );
    const items = [];
    let last: number | undefined;
    for (let i = 0; i < rows.length && items.length < limit; i += 2) {
      const event = await this.get(rows[i]!);
      last = Number(rows[i + 1]);
      if (event) items.push({ ...event, acceptedAt: new Date(event.acceptedAt).toISOString() });
    }
    const more = rows.length / 2 > limit;
    return { items, ...(more && last !== undefined ? { nextCursor: String(last) } : {}) };
  }

  /** Events whose delivery is overdue (their deliverer died): for the workers' loop. */
  overdue(now: number, limit = 50): Promise<string[]> {
    return this.redis.zrangebyscore(
      this.keys.outbox,
      "-inf",
      now - REDELIVER_AFTER_MS,
      "LIMIT",
      0,
      limit,
    );
  }

  /**
   * Delivers one event: starts the target of every enabled rule it matches, then
   * takes it out of the outbox. A start the runtime refuses (the target is gone) is
   * reported, not retried; anything else (Redis away) leaves the event in the
   * outbox for a worker to deliver again.
   */
  async deliver(eventId: string, rules: RuleDefinition[]): Promise<Delivery> {
    const delivery: Delivery = { started: [], failed: [] };
    const event = await this.get(eventId);
    if (event) {
      const { acceptedAt: _a, ...envelope } = event;
      for (const rule of rules) {
        if (rule.state !== "ENABLED" || !matches(rule.eventPattern, envelope as unknown as Json))
          continue;
        const { stateMachine, version, alias } = rule.target;
        try {
          const result = await this.runtime.startExecution(stateMachine, {
            name: `${rule.name}-${eventId}`,
            input: ruleInput(rule.target, envelope as unknown as Json),
            caller: { name: `rule:${rule.name}` },
            ...(version !== undefined ? { version } : {}),
            ...(alias !== undefined ? { alias } : {}),
          });
          delivery.started.push({
            rule: rule.name,
            executionId: result.executionId,
            created: result.created,
          });
        } catch (err) {
          if (!(err instanceof RuntimeError)) throw err;
          delivery.failed.push({ rule: rule.name, error: `${err.code}: ${err.message}` });
        }
      }
      delivery.waitersTaken = await this.waits.offer(envelope as BusEvent, this.runtime);
    }
    await this.redis.zrem(this.keys.outbox, eventId);
    return delivery;
  }
}

// KEYS: event, events, outbox[, entry id]. ARGV: event id, event JSON, now, retention ms.
// → the EventId: the new one, or the first one answered for this entry id.
const PUT_EVENT = `
if KEYS[4] then
  local first = redis.call('get', KEYS[4])
  if first then return first end
  redis.call('set', KEYS[4], ARGV[1], 'PX', ARGV[4])
end
redis.call('set', KEYS[1], ARGV[2], 'PX', ARGV[4])
redis.call('zadd', KEYS[2], ARGV[3], ARGV[1])
redis.call('zadd', KEYS[3], ARGV[3], ARGV[1])
redis.call('zremrangebyscore', KEYS[2], '-inf', tonumber(ARGV[3]) - tonumber(ARGV[4]))
return ARGV[1]`;
