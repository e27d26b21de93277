// The cost of publishing one event while many executions wait on other keys (issue 39).
// Run: npx tsx bench/event-waits.ts  Env: BENCH_WAITERS (default 100000), BENCH_EVENTS (default 200).
//
// Waiters are registered as a waitForEvent task's runner registers them (EventWaits.register),
// each on a source of its own; events are then offered on yet another source, and on the
// source of one waiter. Offering looks up the index sets of the event's source and
// detail-type, so its cost should not grow with the waiters parked on other keys.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import type { BusEvent } from "../runtime/triggers/events/event-bus.js";
import { EventWaits } from "../runtime/triggers/events/event-waits.js";
import { triggerKeys } from "../runtime/triggers/trigger-keys.js";

const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
const WAITERS = Number(process.env.BENCH_WAITERS ?? 100_000);
const EVENTS = Number(process.env.BENCH_EVENTS ?? 200);

const prefix = `bench-waits-${randomBytes(4).toString("hex")}`;
const redis = new Redis(REDIS_URL);
const waits = new EventWaits(redis, triggerKeys(prefix));
const answered: string[] = [];
const answerer = {
  sendTaskSuccess: async (token: string) => void answered.push(token),
  sendTaskFailure: async () => {},
};

function event(source: string, i: number): BusEvent {
  return {
    version: "0",
    id: `e-${i}`,
    "detail-type": "Tick",
    source,
    time: new Date().toISOString(),
    resources: [],
    detail: { i },
  };
}

async function offerAll(source: string): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const t = process.hrtime.bigint();
    await waits.offer(event(source, i), answerer);
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return times.sort((a, b) => a - b);
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

try {
  const before = await offerAll("nobody");
  const started = Date.now();
  for (let i = 0; i < WAITERS; i += 500) {
    await Promise.all(
      Array.from({ length: Math.min(500, WAITERS - i) }, (_, j) =>
        waits.register(`tok-${i + j}`, `exec-${i + j}`, {
          Pattern: { source: [`src-${i + j}`] },
          Match: "$event.detail.i >= 0",
        }),
      ),
    );
  }
  console.log(`registered ${WAITERS} waiters in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  const after = await offerAll("nobody");
  const hit = await offerAll("src-7");
  const show = (label: string, t: number[]) =>
    console.log(`${label}: p50 ${pct(t, 0.5).toFixed(3)} ms, p99 ${pct(t, 0.99).toFixed(3)} ms`);
  show("offer, 0 waiters parked", before);
  show(`offer, ${WAITERS} waiters parked on other sources`, after);
  show(`offer to a source one waiter waits on (taken once: ${answered.length})`, hit);
} finally {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== "0");
  redis.disconnect();
}
