import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { example } from "./examples.js";
import {
  startFakeServer,
  type FakeRequest,
  type FakeResponse,
  type FakeServer,
} from "./fake-server.js";
import { startStack, type Stack } from "./stack.js";

/**
 * definitions/agent-loop.asl.yaml end to end on the model task (stepwise:model) against
 * a fake OpenAI-compatible server on 127.0.0.1, configured as a worker is: a
 * STEPWISE_MODEL_ENDPOINTS file naming the endpoint and the variable holding its key.
 * The scripted model asks for tools (dispatched by name: one over HTTP, one computed),
 * throttles once (429 with Retry-After) and fails once (500) — the state's Retry calls
 * again with the same Idempotency-Key — then answers. A model that never stops calling
 * tools hits the iteration guard.
 */
const API_KEY = "sk-e2e-secret-0123456789abcdefghij";
const BIG_REPORT = "r".repeat(2 * 1024 * 1024);
let stack: Stack;
let model: FakeServer;
let configDir: string;
let script: ((request: FakeRequest) => FakeResponse)[] = [];

function toolCall(id: string, name: string, args: object) {
  return { id, type: "function", function: { name, arguments: JSON.stringify(args) } };
}
const completion = (message: object, finish = "stop"): FakeResponse => ({
  body: {
    id: "c",
    object: "chat.completion",
    model: "fake-1-2026",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finish }],
    usage: { prompt_tokens: 200, completion_tokens: 50, total_tokens: 250 },
  },
});

interface WireMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

beforeAll(async () => {
  model = await startFakeServer((request) => {
    if (request.path === "/tools/weather") {
      const city = (request.body as { city: string }).city;
      // A tool result of 2 MiB: it goes by reference (engine/core/payload-ref.ts).
      if (city === "Atlantis") return { body: { city, celsius: 30, report: BIG_REPORT } };
      return { body: { city, celsius: city === "Lisbon" ? 21 : 9 } };
    }
    if (request.path === "/v1/chat/completions") {
      const next = script.shift();
      if (!next) return { status: 500, body: { error: "script exhausted" } };
      return next(request);
    }
    return { status: 404, body: { error: "no such path" } };
  });
  // Test files run in their own processes (vitest forks): the variables stay here.
  configDir = await mkdtemp(join(tmpdir(), "stepwise-models-"));
  const config = join(configDir, "models.yaml");
  await writeFile(
    config,
    [
      "default:",
      `  baseUrl: ${model.url}/v1`,
      "  apiKeyEnv: STEPWISE_E2E_MODEL_KEY",
      "  model: fake-1",
      "  inputPricePerMTok: 0.15",
      "  outputPricePerMTok: 0.6",
      "",
    ].join("\n"),
  );
  stack = await startStack({
    egressAllow: "127.0.0.1",
    env: {
      STEPWISE_MODEL_ENDPOINTS: config,
      STEPWISE_E2E_MODEL_KEY: API_KEY,
      // Results past 256 KiB go by reference instead of failing (README, "AI agents").
      STEPWISE_PAYLOAD_STORE: "redis",
    },
  });
  const created = await stack.client.call("POST", "/v1/state-machines?name=agent", {
    raw: await example("agent-loop.asl.yaml"),
    contentType: "application/yaml",
  });
  expect(created.status).toBe(201);
  expect(created.body.warnings ?? []).toEqual([]);
});
afterAll(async () => {
  await stack?.close();
  await model?.close();
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

const input = (extra: object = {}) => ({
  prompt: "Is it warmer in Lisbon or in Oslo, in °F?",
  toolsUrl: `${model.url}/tools`,
  ...extra,
});

async function finished(executionId: string): Promise<any> {
  return stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.body.status === "RUNNING" ? undefined : r.body;
  }, 30_000);
}

describe("AI agent loop on stepwise:model", () => {
  it("dispatches tool calls by name, retries a 429 (Retry-After) and a 500 with one Idempotency-Key, and answers", async () => {
    model.requests.length = 0;
    script = [
      () => ({
        status: 429,
        headers: { "retry-after": "1" },
        body: { error: { type: "rate_limit", message: "slow down" } },
      }),
      () =>
        completion(
          {
            content: null,
            tool_calls: [
              toolCall("t1", "get_weather", { city: "Lisbon" }),
              toolCall("t2", "get_weather", { city: "Oslo" }),
            ],
          },
          "tool_calls",
        ),
      () => ({ status: 500, body: { error: { message: "overloaded" } } }),
      (request) => {
        const messages = (request.body as { messages: WireMessage[] }).messages;
        const results = messages
          .filter((m) => m.role === "tool")
          .map((m) => JSON.parse(m.content!) as { city: string; celsius: number });
        const warmest = results.sort((a, b) => b.celsius - a.celsius)[0]!;
        return completion(
          {
            content: null,
            tool_calls: [
              toolCall("t3", "celsius_to_fahrenheit", { celsius: warmest.celsius }),
              toolCall("t4", "send_email", { to: "x" }),
            ],
          },
          "tool_calls",
        );
      },
      (request) => {
        const messages = (request.body as { messages: WireMessage[] }).messages;
        const last = messages.filter((m) => m.role === "tool").slice(-2);
        const { fahrenheit } = JSON.parse(last[0]!.content!) as { fahrenheit: number };
        return completion({ content: `Lisbon is warmer (${fahrenheit} °F).` });
      },
    ];
    const started = await stack.client.post("/v1/state-machines/agent/executions", {
      input: input(),
    });
    expect(started.status).toBe(201);
    const executionId = started.body.executionId as string;
    const done = await finished(executionId);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      output: { answer: "Lisbon is warmer (69.8 °F).", iterations: 3 },
    });

    // Five model requests: 429 + retry, 500 + retry, the answer.
    const calls = model.requests.filter((r) => r.path === "/v1/chat/completions");
    expect(calls).toHaveLength(5);
    expect(model.requests.filter((r) => r.path === "/tools/weather")).toHaveLength(2);
    for (const call of calls) expect(call.headers.authorization).toBe(`Bearer ${API_KEY}`);
    const keys = calls.map((c) => c.headers["idempotency-key"]);
    const attempts = calls.map((c) => c.headers["stepwise-attempt"]);
    // One key per entry into Plan, the same across its Retry attempts.
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).toBe(keys[3]);
    expect(new Set(keys).size).toBe(3);
    expect(attempts).toEqual(["1", "2", "1", "2", "1"]);

    // The conversation on the wire: the model's own tool calls with string arguments,
    // tool results as strings tied to their calls, the unknown tool answered.
    const last = calls.at(-1)!.body as { model: string; messages: WireMessage[]; tools: any[] };
    expect(last.model).toBe("fake-1");
    expect(last.tools.map((t) => t.function.name)).toEqual([
      "get_weather",
      "celsius_to_fahrenheit",
    ]);
    expect(last.messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "tool",
      "assistant",
      "tool",
      "tool",
    ]);
    expect(last.messages[2]!.tool_calls![0]!.function).toEqual({
      name: "get_weather",
      arguments: '{"city":"Lisbon"}',
    });
    expect(last.messages.slice(6)).toEqual([
      { role: "tool", tool_call_id: "t3", content: '{"fahrenheit":69.8}' },
      { role: "tool", tool_call_id: "t4", content: "There is no tool named send_email" },
    ]);

    const history = await stack.client.get(
      `/v1/executions/${encodeURIComponent(executionId)}/history?limit=1000`,
    );
    const events = history.body.items as any[];
    const failed = events
      .filter((e) => e.type === "TaskFailed")
      .map((e) => e.taskFailedEventDetails);
    expect(failed.map((d) => d.error)).toEqual(["Model.RateLimited", "Model.ServerError"]);
    expect(JSON.parse(failed[0].cause)).toEqual({
      statusCode: 429,
      body: { error: { type: "rate_limit", message: "slow down" } },
      retryAfterSeconds: 1,
    });
    expect(JSON.parse(failed[1].cause).body).toEqual({ error: { message: "overloaded" } });

    // The normalised output a Choice branches on.
    const firstPlan = events.find(
      (e) => e.type === "TaskSucceeded" && e.taskSucceededEventDetails.resourceType === "stepwise",
    );
    expect(JSON.parse(firstPlan.taskSucceededEventDetails.output)).toEqual({
      message: {
        role: "assistant",
        content: null,
        toolCalls: [
          { id: "t1", name: "get_weather", arguments: { city: "Lisbon" } },
          { id: "t2", name: "get_weather", arguments: { city: "Oslo" } },
        ],
      },
      finishReason: "tool_calls",
      usage: { inputTokens: 200, outputTokens: 50 },
      model: "fake-1-2026",
      costUsd: 0.00006,
    });

    // The key is nowhere in what was recorded, nor in the execution.
    expect(JSON.stringify(events)).not.toContain(API_KEY);
    expect(JSON.stringify(done)).not.toContain(API_KEY);
  }, 40_000);

  it("passes a 2 MiB tool result by reference: small history, the whole result sent to the model", async () => {
    model.requests.length = 0;
    let seen: WireMessage | undefined;
    script = [
      () =>
        completion(
          { content: null, tool_calls: [toolCall("big", "get_weather", { city: "Atlantis" })] },
          "tool_calls",
        ),
      (request) => {
        seen = (request.body as { messages: WireMessage[] }).messages.find(
          (m) => m.role === "tool",
        );
        return completion({ content: "Atlantis is warm." });
      },
    ];
    const started = await stack.client.post("/v1/state-machines/agent/executions", {
      input: input(),
    });
    const executionId = started.body.executionId as string;
    const done = await finished(executionId);
    expect(done).toMatchObject({ status: "SUCCEEDED", output: { answer: "Atlantis is warm." } });
    // The model got the tool's whole answer, resolved from the reference.
    expect(seen).toMatchObject({ role: "tool", tool_call_id: "big" });
    expect(JSON.parse(seen!.content!)).toEqual({
      city: "Atlantis",
      celsius: 30,
      report: BIG_REPORT,
    });

    // Inside the execution it traveled as {$ref, size, preview}: no event carries 2 MiB.
    const history = (
      await stack.client.get(`/v1/executions/${encodeURIComponent(executionId)}/history?limit=1000`)
    ).body.items as Record<string, any>[];
    for (const event of history) expect(JSON.stringify(event).length).toBeLessThan(64 * 1024);
    const exited = history.find(
      (e) => e.type === "TaskStateExited" && e.stateExitedEventDetails.name === "GetWeather",
    )!;
    const ref = JSON.parse(exited.stateExitedEventDetails.output);
    expect(ref.$ref).toMatch(/^stepwise:payload:[0-9a-f]{64}$/);
    expect(ref.size).toBeGreaterThan(2 * 1024 * 1024);
    expect(ref.preview).toContain('"role":"tool"');
  }, 40_000);

  it("stops a model that never stops calling tools (max iterations)", async () => {
    script = Array.from(
      { length: 10 },
      () => () =>
        completion({
          content: null,
          tool_calls: [toolCall("again", "get_weather", { city: "Oslo" })],
        }),
    );
    const started = await stack.client.post("/v1/state-machines/agent/executions", {
      input: input({ maxIterations: 2 }),
    });
    const done = await finished(started.body.executionId);
    expect(done).toMatchObject({ status: "FAILED", error: "Agent.MaxIterationsExceeded" });
    expect(done.cause).toContain("2");
  }, 40_000);
});
