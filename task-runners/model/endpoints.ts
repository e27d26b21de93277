import { readFileSync } from "node:fs";
import { load as loadYaml } from "../../schema/lazy/yaml.js";
import { isJsonObject } from "../../engine/core/json.js";

/**
 * Named model endpoints (`STEPWISE_MODEL_ENDPOINTS` = path of a JSON or YAML file).
 * A definition names an endpoint (`Endpoint: fast`), never a URL or a key: keys live
 * in the worker's environment (`apiKeyEnv` names the variable), so they never enter a
 * definition, a history event or a log line. The endpoint `default` serves model
 * states without `Endpoint`.
 */
export interface ModelEndpoint {
  /** `https://api.openai.com/v1`: the runner POSTs to `<baseUrl>/chat/completions`. */
  baseUrl: string;
  /** The environment variable holding the API key (sent as `Authorization: Bearer`). */
  apiKeyEnv?: string;
  /** The model of states that name none. */
  model?: string;
  /** USD per million input (prompt) tokens, for `costUsd` and budgets. */
  inputPricePerMTok?: number;
  /** USD per million output (completion) tokens. */
  outputPricePerMTok?: number;
}

export type ModelEndpoints = Readonly<Record<string, ModelEndpoint>>;

export const ENDPOINTS_ENV = "STEPWISE_MODEL_ENDPOINTS";
export const DEFAULT_ENDPOINT = "default";

/** Parses and checks the configuration text (JSON is YAML); throws naming the bad field. */
export function parseEndpoints(text: string, source = ENDPOINTS_ENV): ModelEndpoints {
  let raw: unknown;
  try {
    raw = loadYaml().parse(text);
  } catch (err) {
    throw new Error(`${source}: not JSON or YAML: ${(err as Error).message}`);
  }
  if (!isJsonObject(raw)) throw new Error(`${source}: expected an object of named endpoints`);
  const out: Record<string, ModelEndpoint> = {};
  for (const [name, value] of Object.entries(raw)) {
    const at = `${source}: endpoint '${name}'`;
    if (!isJsonObject(value)) throw new Error(`${at} must be an object`);
    const { baseUrl, apiKeyEnv, model, inputPricePerMTok, outputPricePerMTok } = value;
    if (typeof baseUrl !== "string" || !/^https?:\/\//.test(baseUrl)) {
      throw new Error(`${at}: baseUrl must be an http(s) URL`);
    }
    const endpoint: ModelEndpoint = { baseUrl: baseUrl.replace(/\/+$/, "") };
    if (apiKeyEnv !== undefined) {
      if (typeof apiKeyEnv !== "string" || apiKeyEnv === "") {
        throw new Error(`${at}: apiKeyEnv must name an environment variable`);
      }
      endpoint.apiKeyEnv = apiKeyEnv;
    }
    if (model !== undefined) {
      if (typeof model !== "string") throw new Error(`${at}: model must be a string`);
      endpoint.model = model;
    }
    for (const [field, price] of [
      ["inputPricePerMTok", inputPricePerMTok],
      ["outputPricePerMTok", outputPricePerMTok],
    ] as const) {
      if (price === undefined) continue;
      if (typeof price !== "number" || !(price >= 0)) {
        throw new Error(`${at}: ${field} must be a number of at least 0`);
      }
      endpoint[field] = price;
    }
    out[name] = endpoint;
  }
  return out;
}
