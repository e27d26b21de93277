import type { Redis } from "ioredis";
import { RedisRuntime } from "../runtime.js";
import type { RuntimeSettings } from "../settings.js";
import { REDELIVER_AFTER_MS } from "./events/event-bus.js";
import { EventWaits } from "./events/event-waits.js";
import { triggerKeys } from "./trigger-keys.js";

/** How often a worker looks for due schedules and overdue events: bounds a tick's lateness. */
export const TRIGGER_POLL_MS = 500;

/** The longest a close waits for a pass in flight, and for the runtime to close. */
const CLOSE_WAIT_MS = 2_000;

function within(promise: Promise<unknown> | undefined, ms: number): Promise<unknown> {
  if (!promise) return Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.catch(() => undefined),
    new Promise((done) => (timer = setTimeout(done, ms))),
  ]).finally(() => clearTimeout(timer));
}

export interface TriggerLoop {
  close(): Promise<void>;
}

/**
 * The workers' side of the triggers: every `TRIGGER_POLL_MS`, one cheap look at the
 * `due`, `outbox` and wait deadline/answer sorted sets over the worker's connection; only when something
 * is due does the loop open a runtime (its own connections, made once) and fire it
 * (triggers.ts `tick`). Any number of workers run this loop: a tick's execution name
 * is derived from it, so two firing one tick start one execution.
 */
export function startTriggerLoop(
  redis: Redis,
  settings: RuntimeSettings,
  onError: (err: unknown) => void,
): TriggerLoop {
  const keys = triggerKeys(settings.prefix);
  const waits = new EventWaits(redis, keys);
  let runtime: RedisRuntime | undefined;
  let running: Promise<void> | undefined;
  let closed = false;
  const pass = async (): Promise<void> => {
    const now = Date.now();
    const [[, due], [, overdue]] = (await redis
      .multi()
      .zcount(keys.due, "-inf", now)
      .zcount(keys.outbox, "-inf", now - REDELIVER_AFTER_MS)
      .exec()) as [[null, number], [null, number]];
    if (due === 0 && overdue === 0 && !(await waits.pending(now))) return;
    runtime ??= new RedisRuntime(settings);
    await runtime.triggers.tick(now);
  };
  const timer = setInterval(() => {
    if (running || closed) return;
    running = pass()
      // A pass cut short by the close (its connection closed under it) is no error.
      .catch((err: unknown) => (closed ? undefined : onError(err)))
      .finally(() => (running = undefined));
  }, TRIGGER_POLL_MS);
  timer.unref();
  return {
    async close() {
      closed = true;
      clearInterval(timer);
      // Bounded: a pass waiting on a Redis that is away must not hold the worker's shutdown
      // (what it did not finish is still due, and the next worker fires it).
      await within(running, CLOSE_WAIT_MS);
      await within(runtime?.close(), CLOSE_WAIT_MS);
    },
  };
}
