import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer } from "../../api/server.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { REDIS_URL, startStack, type Stack } from "./stack.js";

/** /health, /metrics and /docs. */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
});
afterAll(async () => {
  await stack?.close();
});

describe("operations", () => {
  it("/health is 200 while Redis answers", async () => {
    const reply = await stack.client.get("/health", { key: null });
    expect(reply.status).toBe(200);
    expect(reply.body).toEqual({ status: "ok", checks: { redis: "ok" } });
  });

  it("/health is 503 ServiceUnavailable when the check fails", async () => {
    const runtime = createRedisRuntime({
      redisUrl: REDIS_URL,
      prefix: `${stack.prefix}-down`,
    });
    const app = await buildServer({
      runtime,
      health: async () => {
        throw new Error("connect ECONNREFUSED 127.0.0.1:1");
      },
    });
    try {
      await app.listen({ port: 0, host: "127.0.0.1" });
      const port = (app.server.address() as AddressInfo).port;
      const reply = await fetch(`http://127.0.0.1:${port}/health`);
      expect(reply.status).toBe(503);
      expect(((await reply.json()) as { error: string }).error).toBe("ServiceUnavailable");
    } finally {
      await app.close();
      await runtime.close();
    }
  });

  it("/metrics speaks the Prometheus text format with HTTP and runtime series", async () => {
    const { client } = stack;
    await client.post("/v1/state-machines", {
      name: "counted",
      definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
    });
    await client.post("/v1/state-machines/counted/executions?wait=5", {});
    const reply = await client.get("/metrics", { key: null });
    expect(reply.status).toBe(200);
    expect(reply.headers.get("content-type")).toContain("text/plain");
    expect(reply.text).toMatch(/^# HELP /m);
    expect(reply.text).toContain(
      'stepwise_http_requests_total{method="POST",route="/v1/state-machines/:name/executions",status="201"}',
    );
    expect(reply.text).toContain("stepwise_http_request_duration_seconds_bucket");
    // Every sample line is `name{labels} value`.
    for (const line of reply.text.split("\n").filter((l) => l && !l.startsWith("#"))) {
      expect(line).toMatch(/^[a-z_:][a-z0-9_:]*(\{[^}]*\})? [-+0-9.eInfa]+$/);
    }
  });
});
