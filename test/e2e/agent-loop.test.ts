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
 * definitions/agent-loop.asl.yaml end to end against a fake chat-completions model on
 * 127.0.0.1: the model asks for tools, the tools run as HTTP tasks, the model answers.
 * Along the way it throttles (429) and fails (500) once each — the Retry backs off and
 * tries again — and a model that never stops calling tools hits the iteration guard.
 */
let stack: Stack;
let model: FakeServer;
let script: ((request: FakeRequest) => FakeResponse)[] = [];

const tools = [
  {
    type: "function",
    function: {
      name: "get_weather",
      description: "Current weather of a city",
      parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
    },
  },
];

function toolCall(id: string, city: string) {
  return {
    id,
    type: "function",
    function: { name: "get_weather", arguments: JSON.stringify({ city }) },
  };
}
const assistant = (message: object): FakeResponse => ({
  body: {
    id: "c",
    object: "chat.completion",
    choices: [{ index: 0, message: { role: "assistant", ...message } }],
  },
});

beforeAll(async () => {
  model = await startFakeServer((request) => {
    if (request.path.startsWith("/tools/get_weather")) {
      const city = (request.body as { city: string }).city;
      return { body: { city, celsius: city === "Lisbon" ? 21 : 9 } };
    }
    if (request.path === "/v1/chat/completions") {
      const next = script.shift();
      if (!next) return { status: 500, body: { error: "script exhausted" } };
      return next(request);
    }
    return { status: 404, body: { error: "no such path" } };
  });
  stack = await startStack({ egressAllow: "127.0.0.1" });
  const created = await stack.client.call("POST", "/v1/state-machines?name=agent", {
    raw: await example("agent-loop.asl.yaml"),
    contentType: "application/yaml",
  });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await stack?.close();
  await model?.close();
});

const input = (extra: object = {}) => ({
  prompt: "Is it warmer in Lisbon or in Oslo?",
  model: { endpoint: model.url, name: "fake-1" },
  toolsUrl: `${model.url}/tools`,
  tools,
  ...extra,
});

async function finished(executionId: string): Promise<any> {
  return stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.body.status === "RUNNING" ? undefined : r.body;
  }, 30_000);
}

describe("AI agent loop", () => {
  it("calls tools through HTTP tasks, retries 429 and 5xx with backoff, and answers", async () => {
    model.requests.length = 0;
    script = [
      () => ({ status: 429, body: { error: { message: "rate limited" } } }),
      () =>
        assistant({
          content: null,
          tool_calls: [toolCall("t1", "Lisbon"), toolCall("t2", "Oslo")],
        }),
      () => ({ status: 500, body: { error: { message: "overloaded" } } }),
      (request) => {
        const messages = (request.body as { messages: { role: string; content: string }[] })
          .messages;
        const toolResults = messages
          .filter((m) => m.role === "tool")
          .map((m) => JSON.parse(m.content));
        const warmest = toolResults.sort((a, b) => b.celsius - a.celsius)[0];
        return assistant({ content: `${warmest.city} is warmer (${warmest.celsius} °C).` });
      },
    ];
    const started = await stack.client.post("/v1/state-machines/agent/executions", {
      input: input(),
    });
    expect(started.status).toBe(201);
    const done = await finished(started.body.executionId);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      output: { answer: "Lisbon is warmer (21 °C).", iterations: 2 },
    });

    const modelCalls = model.requests.filter((r) => r.path === "/v1/chat/completions");
    expect(modelCalls).toHaveLength(4);
    expect(model.requests.filter((r) => r.path.startsWith("/tools/"))).toHaveLength(2);
    const last = modelCalls.at(-1)!.body as {
      model: string;
      messages: { role: string }[];
      tools: unknown[];
    };
    expect(last.model).toBe("fake-1");
    expect(last.tools).toEqual(tools);
    expect(last.messages.map((m) => m.role)).toEqual([
      "system",
      "user",
      "assistant",
      "tool",
      "tool",
    ]);

    const history = await stack.client.get(
      `/v1/executions/${encodeURIComponent(started.body.executionId)}/history?limit=1000`,
    );
    const types = history.body.items.map((e: { type: string }) => e.type) as string[];
    expect(types.filter((t) => t === "TaskFailed")).toHaveLength(2);
    expect(types).toContain("MapIterationStarted");
  }, 40_000);

  it("stops a model that never stops calling tools (max iterations)", async () => {
    script = Array.from(
      { length: 10 },
      () => () => assistant({ content: null, tool_calls: [toolCall("again", "Oslo")] }),
    );
    const started = await stack.client.post("/v1/state-machines/agent/executions", {
      input: input({ maxIterations: 2 }),
    });
    const done = await finished(started.body.executionId);
    expect(done).toMatchObject({ status: "FAILED", error: "Agent.MaxIterationsExceeded" });
    expect(done.cause).toContain("2");
  }, 40_000);
});
