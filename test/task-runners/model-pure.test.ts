import { describe, expect, it } from "vitest";
import { parseEndpoints } from "../../task-runners/model/endpoints.js";
import {
  classifyFailure,
  failureCause,
  redact,
  retryAfterSeconds,
} from "../../task-runners/model/errors.js";
import {
  ArgumentError,
  buildModelCall,
  UnknownEndpointError,
} from "../../task-runners/model/request.js";
import { InvalidAnswer, normaliseCompletion } from "../../task-runners/model/response.js";

/** The model task's pure parts: configuration, request building, answer normalising, error naming. */
const endpoints = parseEndpoints(`
default:
  baseUrl: https://models.example/v1/
  apiKeyEnv: OPENAI_API_KEY
  model: small-1
  inputPricePerMTok: 0.15
  outputPricePerMTok: 0.6
local: { baseUrl: "http://127.0.0.1:8000/v1" }
`);

describe("endpoints", () => {
  it("parse from YAML or JSON, trailing slash dropped", () => {
    expect(endpoints.default).toEqual({
      baseUrl: "https://models.example/v1",
      apiKeyEnv: "OPENAI_API_KEY",
      model: "small-1",
      inputPricePerMTok: 0.15,
      outputPricePerMTok: 0.6,
    });
    expect(parseEndpoints('{"x": {"baseUrl": "http://h/v1"}}')).toEqual({
      x: { baseUrl: "http://h/v1" },
    });
  });
  it.each([
    ["[]", "object of named endpoints"],
    ["a: {baseUrl: ftp://x}", "baseUrl must be an http(s) URL"],
    ["a: {baseUrl: http://x, inputPricePerMTok: -1}", "inputPricePerMTok"],
    ["a: {baseUrl: http://x, apiKeyEnv: ''}", "apiKeyEnv"],
  ])("refuse %s", (text, problem) => {
    expect(() => parseEndpoints(text)).toThrow(problem);
  });
});

describe("buildModelCall", () => {
  it("maps the arguments to a chat-completions body", () => {
    const call = buildModelCall(
      {
        Messages: [{ role: "user", content: "hi" }],
        Tools: [{ name: "get_weather", parameters: { type: "object" } }],
        ToolChoice: "get_weather",
        Temperature: 0,
        MaxTokens: 100,
      },
      endpoints,
    );
    expect(call.url).toBe("https://models.example/v1/chat/completions");
    expect(call.wantsJson).toBe(false);
    expect(call.body).toEqual({
      model: "small-1",
      messages: [{ role: "user", content: "hi" }],
      tools: [
        { type: "function", function: { name: "get_weather", parameters: { type: "object" } } },
      ],
      tool_choice: { type: "function", function: { name: "get_weather" } },
      temperature: 0,
      max_tokens: 100,
    });
  });

  it("takes back its own normalised message and tool results with JSON content", () => {
    const call = buildModelCall(
      {
        Endpoint: "local",
        Model: "m",
        Tools: [],
        Messages: [
          {
            role: "assistant",
            content: null,
            toolCalls: [{ id: "t1", name: "get_weather", arguments: { city: "Oslo" } }],
          },
          { role: "tool", toolCallId: "t1", content: { celsius: 9 } },
          { role: "assistant", content: "done", toolCalls: [] },
        ],
      },
      endpoints,
    );
    expect(call.body).toEqual({
      model: "m",
      messages: [
        {
          role: "assistant",
          content: null,
          tool_calls: [
            {
              id: "t1",
              type: "function",
              function: { name: "get_weather", arguments: '{"city":"Oslo"}' },
            },
          ],
        },
        { role: "tool", tool_call_id: "t1", content: '{"celsius":9}' },
        { role: "assistant", content: "done" },
      ],
    });
  });

  it("wraps a bare JSON Schema as a strict json_schema response format", () => {
    const schema = { type: "object", properties: { ok: { type: "boolean" } } };
    const call = buildModelCall(
      { Messages: [{ role: "user", content: "?" }], ResponseFormat: schema },
      endpoints,
    );
    expect(call.wantsJson).toBe(true);
    expect(call.body.response_format).toEqual({
      type: "json_schema",
      json_schema: { name: "response", schema, strict: true },
    });
    const passed = buildModelCall(
      { Messages: [{ role: "user", content: "?" }], ResponseFormat: { type: "json_object" } },
      endpoints,
    );
    expect(passed.body.response_format).toEqual({ type: "json_object" });
  });

  it.each([
    [{ Messages: [] }, ArgumentError, "Messages"],
    [{ Messages: [{ content: "x" }] }, ArgumentError, "role"],
    [{ Messages: [{ role: "user" }], Url: "x" }, ArgumentError, "unknown argument 'Url'"],
    [
      { Messages: [{ role: "user" }], Endpoint: "https://api.openai.com/v1" },
      ArgumentError,
      "not a URL",
    ],
    [{ Messages: [{ role: "user" }], Endpoint: "local" }, ArgumentError, "no default model"],
    [{ Messages: [{ role: "user" }], Endpoint: "nope" }, UnknownEndpointError, "default, local"],
    [{ Messages: [{ role: "user" }], Endpoint: "toString" }, UnknownEndpointError, "toString"],
    [{ Messages: [{ role: "user" }], MaxTokens: 0 }, ArgumentError, "MaxTokens"],
  ])("refuses %j", (args, kind, problem) => {
    expect(() => buildModelCall(args, endpoints)).toThrow(kind);
    expect(() => buildModelCall(args, endpoints)).toThrow(problem);
  });
});

describe("normaliseCompletion", () => {
  const options = { endpoint: endpoints.default!, requestedModel: "small-1", wantsJson: false };
  const completion = (message: object, extra: object = {}) => ({
    model: "small-1-2026",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: "stop" }],
    usage: { prompt_tokens: 1000, completion_tokens: 500, total_tokens: 1500 },
    ...extra,
  });

  it("gives tool calls with parsed arguments, usage and cost", () => {
    const out = normaliseCompletion(
      completion({
        content: null,
        tool_calls: [{ id: "c1", type: "function", function: { name: "f", arguments: '{"a":1}' } }],
      }),
      options,
    );
    expect(out).toEqual({
      message: {
        role: "assistant",
        content: null,
        toolCalls: [{ id: "c1", name: "f", arguments: { a: 1 } }],
      },
      finishReason: "stop",
      usage: { inputTokens: 1000, outputTokens: 500 },
      model: "small-1-2026",
      // 1000 × 0.15 / 1e6 + 500 × 0.6 / 1e6
      costUsd: 0.00045,
    });
  });

  it("gives an empty toolCalls array, 0 usage and the asked model when the provider says nothing", () => {
    const out = normaliseCompletion({ choices: [{ message: { content: "hi" } }] }, options);
    expect(out).toEqual({
      message: { role: "assistant", content: "hi", toolCalls: [] },
      finishReason: null,
      usage: { inputTokens: 0, outputTokens: 0 },
      model: "small-1",
      costUsd: 0,
    });
  });

  it("parses the content when JSON was asked", () => {
    const out = normaliseCompletion(completion({ content: '{"ok":true}' }), {
      ...options,
      wantsJson: true,
    });
    expect((out.message as { parsed: unknown }).parsed).toEqual({ ok: true });
  });

  it.each([
    [{}, false, "Model.InvalidResponse"],
    [completion({ content: "not json" }), true, "Model.InvalidResponse"],
    [
      completion({
        tool_calls: [{ id: "x", type: "function", function: { name: "f", arguments: "{oops" } }],
      }),
      false,
      "Model.InvalidResponse",
    ],
    [
      { choices: [{ message: { content: "" }, finish_reason: "content_filter" }] },
      false,
      "Model.ContentFiltered",
    ],
  ])("fails %j (json %s) with %s", (body, wantsJson, error) => {
    try {
      normaliseCompletion(body, { ...options, wantsJson });
      expect.unreachable();
    } catch (err) {
      expect(err).toBeInstanceOf(InvalidAnswer);
      expect((err as InvalidAnswer).error).toBe(error);
    }
  });
});

describe("errors", () => {
  it.each([
    [429, {}, "Model.RateLimited"],
    [500, {}, "Model.ServerError"],
    [503, "upstream down", "Model.ServerError"],
    [
      400,
      {
        error: {
          code: "context_length_exceeded",
          message: "This model's maximum context length is 8192 tokens",
        },
      },
      "Model.ContextLengthExceeded",
    ],
    [400, { error: "prompt exceeds the context window" }, "Model.ContextLengthExceeded"],
    [400, { error: { code: "content_filter", message: "filtered" } }, "Model.ContentFiltered"],
    [401, { error: { message: "Incorrect API key provided" } }, "Model.RequestRejected"],
    [404, { error: { message: "model not found" } }, "Model.RequestRejected"],
  ])("names %i %j %s", (status, body, error) => {
    expect(classifyFailure({ status, body, retryAfter: null })).toBe(error);
  });

  it("reads Retry-After as seconds or an HTTP date", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(retryAfterSeconds("2", now)).toBe(2);
    expect(retryAfterSeconds("Thu, 01 Jan 2026 00:00:05 GMT", now)).toBe(5);
    expect(retryAfterSeconds("soon", now)).toBeUndefined();
    expect(retryAfterSeconds(null, now)).toBeUndefined();
    expect(JSON.parse(failureCause({ status: 429, body: { e: 1 }, retryAfter: "3" }, now))).toEqual(
      {
        statusCode: 429,
        body: { e: 1 },
        retryAfterSeconds: 3,
      },
    );
  });

  it("redacts the key and its head from causes", () => {
    const key = "sk-test-0123456789abcdef";
    expect(redact(`bad key ${key}`, key)).toBe("bad key [redacted]");
    expect(redact("Incorrect API key provided: sk-test-***cdef", key)).not.toContain("sk-test-");
  });
});

describe("causes", () => {
  it("keep a small provider body whole and cut a large one", () => {
    const small = { error: { message: "x" } };
    expect(
      JSON.parse(failureCause({ status: 500, body: small, retryAfter: null }, 0)).body,
    ).toEqual(small);
    const page = `<html>${"x".repeat(20_000)}</html>`;
    const cut = JSON.parse(failureCause({ status: 502, body: page, retryAfter: null }, 0))
      .body as string;
    expect(cut.length).toBeLessThan(8300);
    expect(cut).toMatch(/… \(20013 characters\)$/);
  });
});
