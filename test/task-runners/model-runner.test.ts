import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import { modelRunner } from "../../task-runners/model/index.js";
import { TaskError, type TaskRequest } from "../../task-runners/runner.js";
import { startFakeServer, type FakeResponse, type FakeServer } from "../e2e/fake-server.js";

/**
 * The model runner over a real socket against a fake chat-completions server on
 * 127.0.0.1: headers (key, Idempotency-Key, attempt), Retry-After waited out up to the
 * cap, provider bodies in causes without the key, time limits.
 */
const KEY = "sk-test-abcdefghijklmnopqrstuvwxyz";
let server: FakeServer;
let next: () => FakeResponse = () => ({});

beforeAll(async () => {
  server = await startFakeServer(() => next());
});
afterAll(async () => server?.close());

const runner = (extra: Parameters<typeof modelRunner>[0] = {}) =>
  modelRunner({
    endpoints: {
      default: { baseUrl: `${server.url}/v1`, apiKeyEnv: "TEST_MODEL_KEY", model: "fake-1" },
    },
    env: { TEST_MODEL_KEY: KEY },
    ...extra,
  });

function request(input: Json, extra: Partial<TaskRequest> = {}): TaskRequest {
  return {
    resource: "arn:aws:states:::stepwise:model",
    stateName: "Plan",
    taskId: "exec-1/run#3",
    operationKey: "op-abc",
    executionId: "exec-1",
    attempt: 1,
    input,
    signal: new AbortController().signal,
    ...extra,
  };
}
const ask = { Messages: [{ role: "user", content: "hi" }] };

async function failure(promise: Promise<unknown>): Promise<TaskError> {
  try {
    await promise;
  } catch (err) {
    expect(err).toBeInstanceOf(TaskError);
    return err as TaskError;
  }
  throw new Error("expected a failure");
}

describe("model runner", () => {
  it("handles both spellings of the resource", () => {
    const r = runner();
    expect(r.handles("stepwise:model")).toBe(true);
    expect(r.handles("arn:aws:states:::stepwise:model")).toBe(true);
    expect(r.handles("arn:aws:states:::http:invoke")).toBe(false);
  });

  it("POSTs to <baseUrl>/chat/completions with the key, the operation key and the attempt", async () => {
    server.requests.length = 0;
    next = () => ({ body: { choices: [{ message: { role: "assistant", content: "hello" } }] } });
    const out = await runner().run(request(ask));
    expect(out).toMatchObject({ message: { content: "hello", toolCalls: [] }, model: "fake-1" });
    const sent = server.requests[0]!;
    expect(sent.path).toBe("/v1/chat/completions");
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
    expect(sent.headers["idempotency-key"]).toBe("op-abc");
    expect(sent.headers["stepwise-attempt"]).toBe("2");
    expect(sent.body).toEqual({ model: "fake-1", messages: [{ role: "user", content: "hi" }] });
  });

  it("waits out a short Retry-After before reporting Model.RateLimited", async () => {
    next = () => ({
      status: 429,
      headers: { "retry-after": "1" },
      body: { error: { message: "slow down" } },
    });
    const waits: number[] = [];
    const sleep = async (ms: number) => void waits.push(ms);
    const err = await failure(runner({ sleep }).run(request(ask)));
    expect(waits).toEqual([1000]);
    expect(err.error).toBe("Model.RateLimited");
    expect(JSON.parse(err.cause)).toEqual({
      statusCode: 429,
      body: { error: { message: "slow down" } },
      retryAfterSeconds: 1,
    });
  });

  it("reports a Retry-After over the cap at once, with the wait in the cause", async () => {
    next = () => ({ status: 429, headers: { "retry-after": "3600" }, body: {} });
    const waits: number[] = [];
    const sleep = async (ms: number) => void waits.push(ms);
    const err = await failure(runner({ maxRetryAfterSeconds: 5, sleep }).run(request(ask)));
    expect(waits).toEqual([]);
    expect(JSON.parse(err.cause).retryAfterSeconds).toBe(3600);
  });

  it("never puts the key in a cause, even when the provider echoes it", async () => {
    next = () => ({
      status: 401,
      body: { error: { message: `Incorrect API key provided: ${KEY}` } },
    });
    const err = await failure(runner().run(request(ask)));
    expect(err.error).toBe("Model.RequestRejected");
    expect(err.cause).not.toContain(KEY);
    expect(err.cause).not.toContain(KEY.slice(0, 8));
  });

  it("names 5xx, timeouts and refused connections", async () => {
    next = () => ({ status: 502, body: "bad gateway" });
    expect((await failure(runner().run(request(ask)))).error).toBe("Model.ServerError");
    next = () => ({ delayMs: 2000, body: {} });
    const timedOut = await failure(runner().run(request(ask, { timeoutSeconds: 0.2 })));
    expect(timedOut.error).toBe("Model.Timeout");
    const closed = modelRunner({
      endpoints: { default: { baseUrl: "http://127.0.0.1:1/v1", model: "m" } },
    });
    expect((await failure(closed.run(request(ask)))).error).toBe("Model.ConnectionFailed");
  });

  it("fails with Model.EndpointNotConfigured naming the missing variable, and States.Runtime on bad arguments", async () => {
    const err = await failure(runner({ env: {} }).run(request(ask)));
    expect(err.error).toBe("Model.EndpointNotConfigured");
    expect(err.cause).toContain("TEST_MODEL_KEY");
    expect((await failure(runner().run(request({ ...ask, Endpoint: "gpu" })))).error).toBe(
      "Model.EndpointNotConfigured",
    );
    expect((await failure(runner().run(request({ Messages: "hi" })))).error).toBe("States.Runtime");
  });

  it("names a key a header cannot carry (a placeholder such as sk-… left in), never its value", async () => {
    const err = await failure(runner({ env: { TEST_MODEL_KEY: "sk-…" } }).run(request(ask)));
    expect(err.error).toBe("Model.EndpointNotConfigured");
    expect(err.cause).toContain("TEST_MODEL_KEY holds characters an HTTP header cannot carry");
    expect(err.cause).not.toContain("sk-…");
  });
});

describe("model runner redirects", () => {
  it("are refused, never followed with the key", async () => {
    next = () => ({ status: 307, headers: { location: "http://127.0.0.1:1/elsewhere" }, body: {} });
    const err = await failure(runner().run(request(ask)));
    expect(err.error).toBe("Model.ConnectionFailed");
    expect(err.cause).toContain("redirect");
  });
});
