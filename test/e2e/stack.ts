import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import { Client } from "./client.js";
import { exited, logLine, logLines, spawnBin, type Spawned } from "./processes.js";

/**
 * The whole service for one test file, started as a user starts it: `stepwise serve`
 * through bin/stepwise.js, configured only through the environment variables the
 * README documents, listening on a free port of 127.0.0.1, under a random key prefix
 * so test files never see each other's state. Nothing is built in-process and
 * nothing is faked: what a test here needs, the binary must be able to take.
 */
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export const KEYS = {
  admin: "admin-secret-0123456789abcdef",
  run: "run-secret-0123456789abcdef",
  callback: "callback-secret-0123456789ab",
};
export const API_KEYS = `ops:admin:${KEYS.admin},runner:run:${KEYS.run},approval-ui:callback:${KEYS.callback}`;

export type LogLine = { level: number; msg: string; [k: string]: unknown };

/** `three`: a 3-state Pass machine whose output is its input with `a: 1` and `b: 2`. */
export const THREE_PASSES = {
  name: "three",
  definition: {
    StartAt: "A",
    States: {
      A: { Type: "Pass", Result: 1, ResultPath: "$.a", Next: "B" },
      B: { Type: "Pass", Result: 2, ResultPath: "$.b", Next: "C" },
      C: { Type: "Pass", End: true },
    },
  },
};

export interface Stack {
  url: string;
  prefix: string;
  /** Authenticated as the admin key (pass `key` per call for the others). */
  client: Client;
  /** The service's JSON log lines so far (API and worker alike). */
  logs(): LogLine[];
  /** Stops the service (SIGTERM, as a supervisor does) and deletes the test's keys. */
  close(): Promise<void>;
}

export interface StackOptions {
  /** STEPWISE_API_KEYS; "" turns authentication off. Default: three keys, one per scope. */
  apiKeys?: string;
  /** STEPWISE_APPROVER_GROUPS. */
  approverGroups?: string;
  /** STEPWISE_CONSOLE_DIR: a built console to serve at /console/ (default: console/dist). */
  consoleDir?: string;
  /** STEPWISE_EGRESS_ALLOW: tests whose tasks call a server of their own on 127.0.0.1 open it. */
  egressAllow?: string;
  /** Any other documented variables (STEPWISE_START_RATE, OTEL_EXPORTER_OTLP_ENDPOINT, …). */
  env?: Record<string, string | undefined>;
  /** Log level of the service (default `info`: its ready line, warnings, failed requests). */
  logLevel?: string;
  /**
   * Error lines the service may log without failing the test at close (a test that
   * provokes failures says which); any other error line fails it, so a worker error
   * can never pass silently.
   */
  expectErrors?: RegExp;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const prefix = `stepwise-e2e-${randomBytes(6).toString("hex")}`;
  const service: Spawned = spawnBin(["serve"], {
    env: {
      REDIS_URL,
      STEPWISE_PREFIX: prefix,
      PORT: "0",
      HOST: "127.0.0.1",
      STEPWISE_API_KEYS: options.apiKeys ?? API_KEYS,
      STEPWISE_APPROVER_GROUPS: options.approverGroups,
      STEPWISE_CONSOLE_DIR: options.consoleDir,
      STEPWISE_EGRESS_ALLOW: options.egressAllow,
      STEPWISE_LOG_LEVEL: options.logLevel ?? "info",
      ...options.env,
    },
  });
  let ready;
  try {
    ready = await logLine(service, /ready: API /, 30_000);
  } catch (err) {
    service.child.kill("SIGKILL");
    throw err;
  }
  const url = String(ready.api);
  const keyed = (options.apiKeys ?? API_KEYS) !== "";
  return {
    url,
    prefix,
    client: new Client(url, keyed ? KEYS.admin : null),
    logs: () => logLines(service.output()),
    async close() {
      service.child.kill("SIGTERM");
      const code = await exited(service.child, 30_000).catch(() => {
        service.child.kill("SIGKILL");
        return null;
      });
      const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
      await redis.connect();
      await deleteKeys(redis, prefix);
      redis.disconnect();
      const errors = logLines(service.output()).filter(
        (line) => line.level >= 50 && !options.expectErrors?.test(line.msg),
      );
      if (code !== 0 || errors.length > 0) {
        throw new Error(
          `stepwise serve ${code !== 0 ? `exited ${code}` : "logged errors"}:\n` +
            (errors.length > 0
              ? errors.map((e) => JSON.stringify(e)).join("\n")
              : service.output()),
        );
      }
    },
  };
}

/** Removes every key of the test's prefix (SCAN, never KEYS, and in batches). */
export async function deleteKeys(redis: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
    cursor = next;
    if (keys.length > 0) await redis.del(...keys);
  } while (cursor !== "0");
}
