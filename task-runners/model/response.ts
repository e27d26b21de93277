import { isJsonObject, type Json, type JsonObject } from "../../engine/core/json.js";
import type { ModelEndpoint } from "./endpoints.js";
import { MODEL_ERRORS } from "./errors.js";

/**
 * A chat completion, normalised so a state machine can branch on it without knowing
 * the provider: `{message: {role, content, toolCalls: [{id, name, arguments}]},
 * finishReason, usage: {inputTokens, outputTokens}, model, costUsd}`. `toolCalls` is
 * always an array and `arguments` is parsed JSON, so a Choice reads
 * `$.message.toolCalls[0].name` and a tool task takes `arguments` as its input.
 * With a JSON ResponseFormat, `message.parsed` holds the parsed content.
 * Pure: the runner turns a thrown `InvalidAnswer` into a task failure.
 */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
}

export class InvalidAnswer extends Error {
  constructor(
    readonly error: string,
    message: string,
  ) {
    super(message);
  }
}

export function normaliseCompletion(
  body: unknown,
  options: { endpoint: ModelEndpoint; requestedModel: string; wantsJson: boolean },
): JsonObject {
  const choice = isJsonObject(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
  if (!isJsonObject(choice) || !isJsonObject(choice.message)) {
    throw new InvalidAnswer(MODEL_ERRORS.invalidResponse, "the answer has no choices[0].message");
  }
  const finishReason = typeof choice.finish_reason === "string" ? choice.finish_reason : null;
  if (finishReason === "content_filter") {
    throw new InvalidAnswer(MODEL_ERRORS.contentFiltered, "the provider filtered the answer");
  }
  const wire = choice.message;
  const content = typeof wire.content === "string" ? wire.content : null;
  const toolCalls = Array.isArray(wire.tool_calls) ? wire.tool_calls.map(toolCall) : [];
  const message: JsonObject = {
    role: typeof wire.role === "string" ? wire.role : "assistant",
    content,
    toolCalls,
  };
  if (options.wantsJson && toolCalls.length === 0) {
    message.parsed = parseJson(content, "the content is not the JSON the ResponseFormat asked for");
  }
  const usage = usageOf((body as JsonObject).usage);
  return {
    message,
    finishReason,
    usage: { ...usage },
    model:
      typeof (body as JsonObject).model === "string"
        ? (body as JsonObject).model!
        : options.requestedModel,
    costUsd: costUsd(usage, options.endpoint),
  };
}

function toolCall(call: Json): JsonObject {
  const fn = isJsonObject(call) && isJsonObject(call.function) ? call.function : undefined;
  if (!isJsonObject(call) || !fn || typeof fn.name !== "string") {
    throw new InvalidAnswer(MODEL_ERRORS.invalidResponse, "a tool call has no function name");
  }
  const args = typeof fn.arguments === "string" ? fn.arguments : JSON.stringify(fn.arguments ?? {});
  return {
    id: typeof call.id === "string" ? call.id : null,
    name: fn.name,
    // Models do send broken JSON now and then: a Retry on Model.InvalidResponse asks again.
    arguments:
      args.trim() === ""
        ? {}
        : parseJson(args, `the arguments of tool call '${fn.name}' are not JSON`),
  };
}

function parseJson(text: string | null, problem: string): Json {
  try {
    if (text === null) throw new Error("no content");
    return JSON.parse(text) as Json;
  } catch {
    throw new InvalidAnswer(MODEL_ERRORS.invalidResponse, `${problem}: ${JSON.stringify(text)}`);
  }
}

/** OpenAI's `prompt_tokens`/`completion_tokens` (Anthropic-style `input_tokens` too); 0 when unsaid. */
export function usageOf(usage: Json | undefined): ModelUsage {
  const u = isJsonObject(usage) ? usage : {};
  const count = (...values: (Json | undefined)[]) => {
    const n = values.find((v) => typeof v === "number");
    return typeof n === "number" && n >= 0 ? n : 0;
  };
  return {
    inputTokens: count(u.prompt_tokens, u.input_tokens),
    outputTokens: count(u.completion_tokens, u.output_tokens),
  };
}

/** Dollars at the endpoint's prices per million tokens (0 when it has none), to the nano-dollar. */
export function costUsd(usage: ModelUsage, endpoint: ModelEndpoint): number {
  const dollars =
    (usage.inputTokens * (endpoint.inputPricePerMTok ?? 0) +
      usage.outputTokens * (endpoint.outputPricePerMTok ?? 0)) /
    1_000_000;
  return Math.round(dollars * 1e9) / 1e9;
}
