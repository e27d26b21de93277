import { isJsonObject, type Json, type JsonObject } from "../../engine/core/json.js";
import { DEFAULT_ENDPOINT, type ModelEndpoint, type ModelEndpoints } from "./endpoints.js";
import { MODEL_ARGUMENTS, URL_PATTERN } from "./fields.js";

/**
 * Building a chat-completions request (OpenAI's `POST /chat/completions`, which vLLM,
 * Ollama, llama.cpp, LiteLLM, Groq, Together… serve too) from a model task's
 * arguments. Pure: no key, no network; the runner adds the headers.
 *
 * Arguments (PascalCase, as AWS's own integrations): `Model`, `Messages`, `Tools`,
 * `ToolChoice`, `Temperature`, `MaxTokens`, `ResponseFormat`, `Endpoint`.
 * `Messages` may hold the normalised message a model task returned
 * (`{role, content, toolCalls: [{id, name, arguments}]}`) and tool results as
 * `{role: "tool", toolCallId, content}` with any JSON content: an agent loop appends
 * what it got without reshaping it.
 */
export interface ModelCall {
  endpointName: string;
  endpoint: ModelEndpoint;
  url: string;
  body: JsonObject;
  /** A JSON answer was asked (ResponseFormat): the content must parse. */
  wantsJson: boolean;
}

/** A definition's mistake: the state's arguments are wrong whatever the provider says. */
export class ArgumentError extends Error {}
/** The worker lacks the endpoint the state names. */
export class UnknownEndpointError extends Error {}

const FIELDS: ReadonlySet<string> = new Set(MODEL_ARGUMENTS);
const TOOL_CHOICES = new Set(["auto", "none", "required"]);
const FORMAT_TYPES = new Set(["text", "json_object", "json_schema"]);

export function buildModelCall(args: Json, endpoints: ModelEndpoints): ModelCall {
  if (!isJsonObject(args)) throw new ArgumentError("stepwise:model needs an object of arguments");
  for (const key of Object.keys(args)) {
    if (!FIELDS.has(key)) {
      throw new ArgumentError(`unknown argument '${key}' (known: ${[...FIELDS].join(", ")})`);
    }
  }
  const endpointName = args.Endpoint ?? DEFAULT_ENDPOINT;
  if (typeof endpointName !== "string") throw new ArgumentError("Endpoint must be a string");
  if (URL_PATTERN.test(endpointName)) {
    // A URL here would invite a key beside it in the definition.
    throw new ArgumentError("Endpoint names a configured endpoint, not a URL");
  }
  const endpoint = Object.hasOwn(endpoints, endpointName) ? endpoints[endpointName] : undefined;
  if (!endpoint) {
    const known = Object.keys(endpoints);
    throw new UnknownEndpointError(
      `no model endpoint '${endpointName}' is configured on this worker (${known.length > 0 ? `it has ${known.join(", ")}` : "STEPWISE_MODEL_ENDPOINTS names none"})`,
    );
  }
  const model = args.Model ?? endpoint.model;
  if (typeof model !== "string" || model === "") {
    throw new ArgumentError(
      `Model must be a string (endpoint '${endpointName}' has no default model)`,
    );
  }
  if (!Array.isArray(args.Messages) || args.Messages.length === 0) {
    throw new ArgumentError("Messages must be a non-empty array");
  }
  const body: JsonObject = { model, messages: args.Messages.map(toWireMessage) };
  if (args.Tools !== undefined) {
    if (!Array.isArray(args.Tools)) throw new ArgumentError("Tools must be an array");
    // An empty tools array is refused by OpenAI: no tools means no field.
    if (args.Tools.length > 0) body.tools = args.Tools.map(toWireTool);
  }
  if (args.ToolChoice !== undefined) body.tool_choice = toolChoice(args.ToolChoice);
  if (args.Temperature !== undefined) {
    if (typeof args.Temperature !== "number")
      throw new ArgumentError("Temperature must be a number");
    body.temperature = args.Temperature;
  }
  if (args.MaxTokens !== undefined) {
    if (!Number.isInteger(args.MaxTokens) || (args.MaxTokens as number) < 1) {
      throw new ArgumentError("MaxTokens must be a positive integer");
    }
    body.max_tokens = args.MaxTokens;
  }
  let wantsJson = false;
  if (args.ResponseFormat !== undefined) {
    body.response_format = responseFormat(args.ResponseFormat);
    wantsJson = (body.response_format as JsonObject).type !== "text";
  }
  return { endpointName, endpoint, url: `${endpoint.baseUrl}/chat/completions`, body, wantsJson };
}

/** A message as the wire wants it: snake_case tool fields, arguments and tool results as strings. */
export function toWireMessage(message: Json, index: number): Json {
  if (!isJsonObject(message) || typeof message.role !== "string") {
    throw new ArgumentError(`Messages[${index}] must be an object with a role`);
  }
  const { toolCalls, toolCallId, ...rest } = message;
  const out: JsonObject = { ...rest };
  if (toolCallId !== undefined) out.tool_call_id = toolCallId;
  if (Array.isArray(toolCalls)) {
    if (toolCalls.length > 0) out.tool_calls = toolCalls.map((c) => toWireToolCall(c, index));
  }
  if (Array.isArray(out.tool_calls) && out.tool_calls.length === 0) delete out.tool_calls;
  const content = out.content;
  if (content === undefined) {
    out.content = null;
  } else if (
    content !== null &&
    typeof content !== "string" &&
    // Content parts (text, image_url…) are the one non-string content the wire takes.
    !(Array.isArray(content) && message.role !== "tool")
  ) {
    out.content = JSON.stringify(content);
  }
  return out;
}

function toWireToolCall(call: Json, index: number): Json {
  if (!isJsonObject(call) || typeof call.name !== "string") {
    throw new ArgumentError(`Messages[${index}].toolCalls: each needs a name`);
  }
  return {
    id: call.id ?? null,
    type: "function",
    function: {
      name: call.name,
      arguments:
        typeof call.arguments === "string" ? call.arguments : JSON.stringify(call.arguments ?? {}),
    },
  };
}

/** OpenAI's `{type: "function", function: {...}}`, or the short `{name, description, parameters}`. */
export function toWireTool(tool: Json, index: number): Json {
  if (!isJsonObject(tool)) throw new ArgumentError(`Tools[${index}] must be an object`);
  if (tool.type !== undefined) return tool;
  if (typeof tool.name !== "string") {
    throw new ArgumentError(`Tools[${index}] needs a name (or OpenAI's {type, function} form)`);
  }
  return { type: "function", function: tool };
}

/** `auto`, `none`, `required`, a tool's name, or the wire's object. */
function toolChoice(choice: Json): Json {
  if (typeof choice === "string") {
    return TOOL_CHOICES.has(choice) ? choice : { type: "function", function: { name: choice } };
  }
  if (isJsonObject(choice)) return choice;
  throw new ArgumentError("ToolChoice must be auto, none, required, a tool name or an object");
}

/**
 * OpenAI's `{type: "json_schema", json_schema: {...}}` / `{type: "json_object"}` as
 * they are, or a bare JSON Schema, which asks for an answer matching it (strict).
 */
function responseFormat(format: Json): JsonObject {
  if (!isJsonObject(format)) throw new ArgumentError("ResponseFormat must be an object");
  if (typeof format.type === "string" && FORMAT_TYPES.has(format.type)) return format;
  return { type: "json_schema", json_schema: { name: "response", schema: format, strict: true } };
}
