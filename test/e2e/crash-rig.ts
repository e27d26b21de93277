import { Redis } from "ioredis";
import { expect } from "vitest";
import { Client } from "./client.js";
import { exited, logLine, logLines, spawnBin, testPrefix, type Spawned } from "./processes.js";
import { deleteKeys, REDIS_URL } from "./stack.js";

/**
 * An API without a worker (`stepwise serve --no-worker`) and `stepwise worker`
 * processes started one by one, each free to die at a crash point
 * (STEPWISE_CRASH_AT/AFTER): the shape of the tests that SIGKILL workers mid-run.
 * Leases, locks and stalled checks are short, so a killed worker's claims and jobs
 * come back in about a second.
 */
export interface CrashRig {
  env: Record<string, string>;
  client: Client;
  /** A worker of its own process; with `crash`, it SIGKILLs itself at that point. */
  worker(crash?: { at: string; after: number }): Spawned;
  /** Kills what is left, stops the API, deletes the keys; the API must exit 0 having logged no error. */
  close(): Promise<void>;
}

const ADMIN = "admin-secret-0123456789abcdef";

export async function startCrashRig(
  name: string,
  extraEnv: Record<string, string> = {},
): Promise<CrashRig> {
  const env: Record<string, string> = {
    ...extraEnv,
    REDIS_URL,
    STEPWISE_PREFIX: testPrefix(name),
    STEPWISE_LEASE_MS: "1000",
    STEPWISE_LOCK_MS: "1500",
    STEPWISE_STALLED_MS: "500",
  };
  const api = spawnBin(["serve", "--no-worker"], {
    env: { ...env, PORT: "0", HOST: "127.0.0.1", STEPWISE_API_KEYS: `ops:admin:${ADMIN}` },
  });
  const client = new Client(String((await logLine(api, /ready: API /)).api), ADMIN);
  const workers: Spawned[] = [];
  return {
    env,
    client,
    worker(crash) {
      const spawned = spawnBin(["worker"], {
        env: {
          ...env,
          ...(crash
            ? { STEPWISE_CRASH_AT: crash.at, STEPWISE_CRASH_AFTER: String(crash.after) }
            : {}),
        },
      });
      workers.push(spawned);
      return spawned;
    },
    async close() {
      // A worker whose crash point was never reached (a failing test) is still running.
      for (const spawned of workers) spawned.child.kill("SIGKILL");
      await Promise.all(workers.map((spawned) => exited(spawned.child)));
      api.child.kill("SIGTERM");
      const code = await exited(api.child);
      const redis = new Redis(REDIS_URL);
      await deleteKeys(redis, env.STEPWISE_PREFIX!);
      redis.disconnect();
      const errors = logLines(api.output()).filter((line) => line.level >= 50);
      expect({ code, errors }, api.output()).toEqual({ code: 0, errors: [] });
    },
  };
}
