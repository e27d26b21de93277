import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { freePort } from "../../scripts/free-port.js";
import { spawnStepwise } from "../e2e/processes.js";
export { freePort };
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Redis } from "ioredis";
import { afterEach, beforeEach } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { HistoryEvent } from "../../engine/core/history.js";
import { createRedisRuntime, type RedisRuntime } from "../../runtime/runtime.js";
import type { RuntimeSettings } from "../../runtime/settings.js";
import {
  startWorker,
  type StepwiseWorker,
  type WorkerOptions,
} from "../../runtime/worker/worker.js";

export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";
export const ROOT = resolve(import.meta.dirname, "../..");

/** Short leases and locks so that crash recovery takes about a second in tests. */
export const FAST: Partial<RuntimeSettings> = {
  leaseMs: 1_000,
  lockDurationMs: 1_500,
  stalledIntervalMs: 500,
};

export function randomPrefix(): string {
  return `t-${randomBytes(5).toString("hex")}`;
}

export interface Harness {
  prefix: string;
  redisUrl: string;
  runtime: RedisRuntime;
  workers: StepwiseWorker[];
  startWorker(options?: WorkerOptions): Promise<StepwiseWorker>;
  close(): Promise<void>;
}

/**
 * Tests that read a shard's keys by name (storage layout, scripts called by hand)
 * run on a deployment of one shard, whose keys `makeKeys(prefix)` and
 * `runtime.keys` name; the rest run on the default layout (runtime/shards/shards.ts).
 */
export const ONE_SHARD = { shards: 1 } as const;

/** A runtime on a fresh random prefix; `close` stops its workers and deletes its keys. */
export async function harness(
  options: { redisUrl?: string; prefix?: string; shards?: number } = {},
): Promise<Harness> {
  const prefix = options.prefix ?? randomPrefix();
  const redisUrl = options.redisUrl ?? REDIS_URL;
  const shards = options.shards !== undefined ? { shards: options.shards } : {};
  const runtime = createRedisRuntime({ redisUrl, prefix, ...FAST, ...shards });
  const workers: StepwiseWorker[] = [];
  return {
    prefix,
    redisUrl,
    runtime,
    workers,
    async startWorker(workerOptions = {}) {
      const worker = await startWorker({
        redisUrl,
        prefix,
        ...FAST,
        ...shards,
        onError: () => {},
        ...workerOptions,
      });
      workers.push(worker);
      return worker;
    },
    async close() {
      await Promise.all(workers.map((w) => w.close(2_000)));
      await runtime.close();
      await deleteKeys(redisUrl, prefix);
    },
  };
}

/**
 * A fresh harness, and a Redis connection beside it, for each test of the file:
 * `use` is given both before each test; both are closed after it.
 */
export function harnessPerTest(
  use: (fresh: { h: Harness; redis: Redis }) => void,
  options: { shards?: number } = {},
): void {
  let current: { h: Harness; redis: Redis } | undefined;
  beforeEach(async () => {
    const h = await harness(options);
    current = { h, redis: new Redis(h.redisUrl) };
    use(current);
  });
  afterEach(async () => {
    current?.redis.disconnect();
    await current?.h.close();
    current = undefined;
  });
}

/** Polls `check` every 20 ms until it holds; throws after `ms`. */
export async function until(check: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("condition not reached");
    await new Promise((r) => setTimeout(r, 20));
  }
}

export async function deleteKeys(redisUrl: string, prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: 1 });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}:*`, "COUNT", 1000);
      cursor = next;
      if (keys.length > 0) await redis.unlink(...keys);
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

/** Every history event of an execution, all pages. */
export async function fullHistory(
  runtime: RedisRuntime,
  executionId: string,
): Promise<HistoryEvent[]> {
  const events: HistoryEvent[] = [];
  let cursor: string | undefined;
  do {
    const page = await runtime.getHistory(executionId, {
      limit: 1000,
      ...(cursor ? { cursor } : {}),
    });
    events.push(...page.items);
    cursor = page.nextCursor;
  } while (cursor);
  return events;
}

/** Ids 1..N with no gap and no duplicate, each `previousEventId` earlier than its event. */
export function historyProblems(events: HistoryEvent[]): string[] {
  const problems: string[] = [];
  events.forEach((e, i) => {
    if (e.id !== i + 1) problems.push(`event #${i + 1} has id ${e.id}`);
    if (e.previousEventId >= e.id)
      problems.push(`event ${e.id} points forward to ${e.previousEventId}`);
  });
  const seen = new Set<string>();
  for (const e of events) {
    const { id: _id, previousEventId: _p, timestamp: _t, ...rest } = e;
    const key = `${e.previousEventId}|${JSON.stringify(rest)}`;
    if (seen.has(key)) problems.push(`event ${e.id} (${e.type}) duplicates an earlier one`);
    seen.add(key);
  }
  return problems;
}

export async function createMachine(
  runtime: RedisRuntime,
  name: string,
  definition: object,
): Promise<void> {
  await runtime.createStateMachine(name, definition as StateMachineDefinition);
}

/** A chain of `n` Pass states. */
export function passChain(n: number): object {
  const States: Record<string, object> = {};
  for (let i = 0; i < n; i++) {
    States[`S${i}`] = i + 1 < n ? { Type: "Pass", Next: `S${i + 1}` } : { Type: "Pass", End: true };
  }
  return { StartAt: "S0", States };
}

/** The integration tests' task handlers as a STEPWISE_TASKS module (fixtures/handlers.mjs). */
export const HANDLERS_MODULE = join(ROOT, "test/integration/fixtures/handlers.mjs");

/**
 * `stepwise worker` (bin/stepwise.js) in a child process, so it can be SIGKILLed for
 * real: configured through the environment as a user's is (REDIS_URL or
 * STEPWISE_REDIS_CLUSTER, STEPWISE_PREFIX, the fast lease and lock settings, the test
 * handlers as STEPWISE_TASKS, STEPWISE_CRASH_AT for a crash point), ready once it logs
 * its ready line.
 */
export function spawnWorker(
  prefix: string,
  env: Record<string, string> = {},
  redisUrl = REDIS_URL,
): ChildProcess & { ready: Promise<void> } {
  const { child } = spawnStepwise(["worker"], {
    env: {
      REDIS_URL: env.STEPWISE_REDIS_CLUSTER === undefined ? redisUrl : undefined,
      STEPWISE_PREFIX: prefix,
      STEPWISE_LEASE_MS: String(FAST.leaseMs),
      STEPWISE_LOCK_MS: String(FAST.lockDurationMs),
      STEPWISE_STALLED_MS: String(FAST.stalledIntervalMs),
      STEPWISE_TASKS: HANDLERS_MODULE,
      ...env,
    },
  });
  const worker = child as ChildProcess & { ready: Promise<void> };
  worker.ready = new Promise((resolveReady, reject) => {
    let out = "";
    child.stdout!.on("data", (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes("worker ready")) resolveReady();
    });
    child.stderr!.on("data", (chunk: Buffer) => {
      if (process.env.DEBUG_WORKERS) process.stderr.write(chunk);
    });
    child.on("exit", (code, signal) =>
      reject(
        new Error(`worker exited (${code ?? signal}) before it was ready: ${out.slice(-2000)}`),
      ),
    );
  });
  worker.ready.catch(() => {});
  return worker;
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolveExit) => child.once("exit", () => resolveExit()));
}

/** An own redis-server with AOF (for restart tests), stopped by pid. */
export async function startRedis(): Promise<{
  url: string;
  port: number;
  dir: string;
  restart(): Promise<void>;
  stop(): Promise<void>;
}> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), "stepwise-redis-"));
  let proc: ChildProcess;
  const launch = async (): Promise<void> => {
    proc = spawn(
      "redis-server",
      [
        "--port",
        String(port),
        "--appendonly",
        "yes",
        "--appendfsync",
        "always",
        "--dir",
        dir,
        "--save",
        "",
      ],
      { stdio: "ignore" },
    );
    const probe = new Redis(`redis://127.0.0.1:${port}`, {
      maxRetriesPerRequest: null,
      lazyConnect: true,
    });
    for (let i = 0; i < 100; i++) {
      try {
        await probe.connect();
        if ((await probe.ping()) === "PONG") break;
      } catch {
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    probe.disconnect();
  };
  await launch();
  const stopProc = async (signal: NodeJS.Signals): Promise<void> => {
    const done = exited(proc);
    proc.kill(signal);
    await done;
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    dir,
    async restart() {
      // SIGTERM: Redis flushes the AOF and exits cleanly, as a deploy or restart would.
      await stopProc("SIGTERM");
      await launch();
    },
    async stop() {
      await stopProc("SIGTERM");
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
