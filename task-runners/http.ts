import type { Json } from "../engine/core/json.js";
import { isJsonObject } from "../engine/core/json.js";
import { bareResource } from "./resources.js";
import { TaskError, type TaskRequest, type TaskRunner } from "./runner.js";

/**
 * HTTP tasks: `http:invoke` or AWS's `arn:aws:states:::http:invoke`, with AWS's
 * arguments (`ApiEndpoint`, `Method`, `Headers`, `QueryParameters`, `RequestBody`).
 * The answer is AWS-shaped (`StatusCode`, `StatusText`, `Headers`, `ResponseBody`).
 * A non-2xx answer fails with `States.Http.StatusCode.<code>` so Retry/Catch can
 * match it. Every request carries `Idempotency-Key` = the operation key (the same
 * for every Retry attempt of one entry into the state), `Stepwise-Attempt` (1, 2,
 * 3…), and correlation headers naming the execution and the attempt (`X-Stepwise-Task`).
 */
export interface HttpRunnerOptions {
  /** Per-request timeout (default 60 s, or the task's TimeoutSeconds when shorter). */
  timeoutMs?: number;
  fetch?: typeof fetch;
}

const RESOURCES = new Set(["http:invoke", "arn:aws:states:::http:invoke"]);

/**
 * Ids hold execution names, which may be any Unicode (AWS's rule), but header values
 * are bytes: non-ASCII is percent-encoded as UTF-8. Names never contain `%` or
 * white space, so ASCII ids pass unchanged and the encoding is unambiguous.
 */
export function headerSafe(id: string): string {
  return id.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
}

export function httpRunner(options: HttpRunnerOptions = {}): TaskRunner {
  const doFetch = options.fetch ?? fetch;
  return {
    name: "http",
    handles: (resource) => RESOURCES.has(bareResource(resource)),
    async run(request) {
      const args = request.input;
      if (!isJsonObject(args) || typeof args.ApiEndpoint !== "string") {
        throw new TaskError(
          "States.Runtime",
          "http:invoke needs an ApiEndpoint string in its arguments",
        );
      }
      const url = new URL(args.ApiEndpoint);
      if (isJsonObject(args.QueryParameters)) {
        for (const [k, v] of Object.entries(args.QueryParameters)) {
          for (const item of Array.isArray(v) ? v : [v]) url.searchParams.append(k, text(item));
        }
      }
      const method = typeof args.Method === "string" ? args.Method.toUpperCase() : "GET";
      const headers: Record<string, string> = {
        // One key per operation, not per attempt: a provider that saw the first try
        // answers the retry with its first result instead of acting twice.
        "idempotency-key": headerSafe(request.operationKey),
        "stepwise-attempt": String(request.attempt + 1),
        "x-stepwise-execution": headerSafe(request.executionId),
        "x-stepwise-task": headerSafe(request.taskId),
      };
      if (request.taskToken !== undefined) headers["x-stepwise-task-token"] = request.taskToken;
      if (isJsonObject(args.Headers)) {
        for (const [k, v] of Object.entries(args.Headers)) headers[k.toLowerCase()] = text(v);
      }
      let body: string | undefined;
      if (args.RequestBody !== undefined && method !== "GET" && method !== "HEAD") {
        body =
          typeof args.RequestBody === "string"
            ? args.RequestBody
            : JSON.stringify(args.RequestBody);
        headers["content-type"] ??= "application/json";
      }
      const limit = Math.min(
        options.timeoutMs ?? 60_000,
        (request.timeoutSeconds ?? Infinity) * 1000,
      );
      const signal = AbortSignal.any([request.signal, AbortSignal.timeout(limit)]);
      let response: Response;
      try {
        response = await doFetch(url, {
          method,
          headers,
          ...(body !== undefined ? { body } : {}),
          signal,
        });
      } catch (err) {
        if (request.signal.aborted) throw err;
        const timedOut =
          err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
        throw new TaskError(
          timedOut ? "States.Timeout" : "States.Http.Socket",
          `${method} ${url.origin}${url.pathname}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      const raw = await response.text();
      const result: Json = {
        StatusCode: response.status,
        StatusText: response.statusText,
        Headers: Object.fromEntries(response.headers.entries()),
        ResponseBody: parseBody(raw, response.headers.get("content-type")),
      };
      if (response.status < 200 || response.status > 299) {
        throw new TaskError(`States.Http.StatusCode.${response.status}`, JSON.stringify(result));
      }
      return result;
    },
  };
}

function text(value: Json): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}

function parseBody(raw: string, contentType: string | null): Json {
  if (contentType?.includes("json")) {
    try {
      return JSON.parse(raw) as Json;
    } catch {
      return raw;
    }
  }
  return raw;
}
