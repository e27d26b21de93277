import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { Redis } from "ioredis";
import { pino, type Logger } from "pino";
import { Admission, type AdmissionSettings } from "../../api/admission.js";
import { parseApiKeys } from "../../api/auth.js";
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from "../../api/connection-limits.js";
import { createRegistry } from "../../api/metrics.js";
import { buildServer } from "../../api/server.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { startWorker } from "../../runtime/worker.js";
import type { SpanSink } from "../../runtime/tracing/sink.js";
import { parseEgressAllow } from "../../task-runners/egress.js";
import { workerMetrics } from "../../runtime/worker-metrics.js";
import { Client } from "./client.js";

/**
 * The whole service for one test file: the real Redis runtime, a real worker and the
 * API listening on a random port of 127.0.0.1 — under a random key prefix, so test
 * files never see each other's state. Nothing is faked. As in `stepwise serve`, the
 * worker counts into the API's metrics registry.
 */
export const REDIS_URL = process.env.REDIS_URL ?? "redis://127.0.0.1:6379";

export const KEYS = {
  admin: "admin-secret-0123456789abcdef",
  run: "run-secret-0123456789abcdef",
  callback: "callback-secret-0123456789ab",
};
export const API_KEYS = `ops:admin:${KEYS.admin},runner:run:${KEYS.run},approval-ui:callback:${KEYS.callback}`;

export interface Stack {
  url: string;
  prefix: string;
  /** Authenticated as the admin key (pass `key` per call for the others). */
  client: Client;
  app: FastifyInstance;
  close(): Promise<void>;
}

export interface StackOptions {
  /** STEPWISE_API_KEYS text; "" turns authentication off. Default: three keys, one per scope. */
  apiKeys?: string;
  /** STEPWISE_APPROVER_GROUPS text. */
  approverGroups?: string;
  /** Runtime settings for the runtime and the worker (approval webhook outbox, …). */
  settings?: { approvalEvents?: boolean };
  /** A built console to serve at /console/ (default: console/dist when it is built). */
  consoleDir?: string;
  /**
   * STEPWISE_EGRESS_ALLOW text for the worker's HTTP tasks; tests whose tasks call a
   * server of their own on 127.0.0.1 open it here (default: the production policy).
   */
  egressAllow?: string;
  /** Timeouts and connection limits of the API (short ones for slow-client tests). */
  limits?: Partial<ConnectionLimits>;
  /** Start admission control (none by default). */
  admission?: AdmissionSettings;
  /** Where the worker's (and the API's stops') spans go (an OTLP sink at a test receiver); closed by the test. */
  spans?: SpanSink;
  /** The worker's pino logger (default: none of its lines are kept). */
  logger?: Logger;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const prefix = `stepwise-e2e-${randomBytes(6).toString("hex")}`;
  const runtime = createRedisRuntime({
    redisUrl: REDIS_URL,
    prefix,
    ...options.settings,
    ...(options.spans ? { spans: options.spans } : {}),
  });
  const registry = createRegistry();
  const worker = await startWorker({
    redisUrl: REDIS_URL,
    prefix,
    ...options.settings,
    ...(options.egressAllow !== undefined ? { egress: parseEgressAllow(options.egressAllow) } : {}),
    onError: () => undefined,
    onTransition: workerMetrics(registry).onTransition,
    logger: options.logger ?? pino({ level: "silent" }),
    ...(options.spans ? { spans: options.spans } : {}),
  });
  const redis = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  await redis.connect();
  const apiKeys = parseApiKeys(options.apiKeys ?? API_KEYS, options.approverGroups);
  const app = await buildServer({
    runtime,
    apiKeys,
    registry,
    ...(options.consoleDir !== undefined ? { consoleDir: options.consoleDir } : {}),
    ...(options.admission
      ? { admission: new Admission(options.admission, () => runtime.backlog()) }
      : {}),
    ...(options.limits ? { limits: { ...DEFAULT_CONNECTION_LIMITS, ...options.limits } } : {}),
    health: async () => {
      await redis.ping();
    },
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const url = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  return {
    url,
    prefix,
    app,
    client: new Client(url, apiKeys.length > 0 ? KEYS.admin : null),
    async close() {
      await app.close();
      await worker.close();
      await runtime.close();
      await deleteKeys(redis, prefix);
      redis.disconnect();
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
