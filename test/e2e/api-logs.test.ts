import { Writable } from "node:stream";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildServer } from "../../api/server.js";
import { createRedisRuntime, type RedisRuntime } from "../../runtime/runtime.js";
import { deleteKeys, randomPrefix, REDIS_URL } from "../integration/helpers.js";

/**
 * The API's log lines are pino JSON; those of a request that carries `traceparent`
 * name its trace, and a start's "request completed" line (its one line, at debug)
 * names the execution it started and that execution's trace.
 */
const prefix = randomPrefix();
let runtime: RedisRuntime;
let app: FastifyInstance;
const lines: Record<string, unknown>[] = [];

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";

beforeAll(async () => {
  runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
  await runtime.createStateMachine("p", {
    StartAt: "P",
    States: { P: { Type: "Pass", End: true } },
  });
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString("utf8").split("\n"))
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  app = await buildServer({ runtime, logger: { level: "debug", stream } });
});

afterAll(async () => {
  await app?.close();
  await runtime?.close();
  await deleteKeys(REDIS_URL, prefix);
});

const completed = (reqId: unknown) =>
  lines.find((l) => l.reqId === reqId && l.msg === "request completed");

describe("API log lines", () => {
  it("carry the traceparent's trace id, and a start's execution", async () => {
    const reply = await app.inject({
      method: "POST",
      url: "/v1/state-machines/p/executions",
      headers: { traceparent: `00-${TRACE}-00f067aa0ba902b7-01` },
      payload: { name: "traced" },
    });
    expect(reply.statusCode).toBe(201);
    const { executionId } = reply.json<{ executionId: string }>();
    const line = lines.find((l) => l.msg === "request completed" && l.traceId === TRACE);
    expect(line).toBeDefined();
    expect(completed(line!.reqId)).toMatchObject({ traceId: TRACE, executionId });
  });

  it("name the trace a start without traceparent opened", async () => {
    const reply = await app.inject({
      method: "POST",
      url: "/v1/state-machines/p/executions",
      payload: { name: "own" },
    });
    const { executionId } = reply.json<{ executionId: string }>();
    const line = lines.find((l) => l.executionId === executionId && l.msg === "request completed");
    const record = await runtime.describeExecution(executionId);
    expect(line?.traceId).toBe(record.traceId);
  });
});
