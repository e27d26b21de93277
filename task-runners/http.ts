import type { Json } from "../engine/core/json.js";
import { isJsonObject } from "../engine/core/json.js";
import { DEFAULT_EGRESS, type EgressPolicy } from "./egress.js";
import { outbound, ResponseTooLarge, type OutboundResponse, type Send } from "./outbound.js";
import { bareResource } from "./resources.js";
import { TaskError, type TaskRunner } from "./runner.js";

/**
 * HTTP tasks: `http:invoke` or AWS's `arn:aws:states:::http:invoke`, with AWS's
 * arguments (`ApiEndpoint`, `Method`, `Headers`, `QueryParameters`, `RequestBody`).
 * The answer is AWS-shaped (`StatusCode`, `StatusText`, `Headers`, `ResponseBody`).
 * A non-2xx answer fails with `States.Http.StatusCode.<code>` so Retry/Catch can
 * match it. Every request carries `Idempotency-Key` = the operation key (the same
 * for every Retry attempt of one entry into the state), `Stepwise-Attempt` (1, 2,
 * 3…), correlation headers naming the execution and the attempt (`X-Stepwise-Task`),
 * and the execution's W3C `traceparent` / `tracestate`.
 *
 * Calls go through the egress policy (egress.ts, outbound.ts): a refused address
 * fails the task with `States.Http.Socket`, and a response body over
 * `maxResponseBytes` with `States.DataLimitExceeded`, read no further.
 */
export interface HttpRunnerOptions {
  /** Per-request timeout (default 60 s, or the task's TimeoutSeconds when shorter). */
  timeoutMs?: number;
  /** Default: `STEPWISE_EGRESS_ALLOW` read once, when the runner is made. */
  egress?: EgressPolicy;
  /**
   * Default `STEPWISE_HTTP_MAX_RESPONSE_BYTES`, else 256 KiB (AWS's payload quota), or
   * STEPWISE_PAYLOAD_RESOLVE_MAX_BYTES when large payloads go by reference.
   */
  maxResponseBytes?: number;
}

/** A task's output may not pass 256 KiB, so a longer body could never be its result. */
export const MAX_RESPONSE_BYTES = 256 * 1024;
export const MAX_RESPONSE_ENV = "STEPWISE_HTTP_MAX_RESPONSE_BYTES";

const RESOURCES = new Set(["http:invoke", "arn:aws:states:::http:invoke"]);

/** Whether the HTTP runner serves this resource (its `.waitForTaskToken` form too). */
export function isHttpResource(resource: string): boolean {
  return RESOURCES.has(bareResource(resource));
}

/**
 * Ids hold execution names, which may be any Unicode (AWS's rule), but header values
 * are bytes: non-ASCII is percent-encoded as UTF-8. Names never contain `%` or
 * white space, so ASCII ids pass unchanged and the encoding is unambiguous.
 */
export function headerSafe(id: string): string {
  return id.replace(/[^\x21-\x7e]/gu, (c) => encodeURIComponent(c));
}

export function httpRunner(options: HttpRunnerOptions = {}): TaskRunner {
  const maxResponseBytes = options.maxResponseBytes ?? MAX_RESPONSE_BYTES;
  const send: Send = outbound({
    policy: options.egress ?? DEFAULT_EGRESS,
    maxResponseBytes,
  });
  return {
    name: "http",
    handles: isHttpResource,
    async run(request) {
      const args = request.input;
      if (!isJsonObject(args) || typeof args.ApiEndpoint !== "string") {
        throw new TaskError(
          "States.Runtime",
          "http:invoke needs an ApiEndpoint string in its arguments",
        );
      }
      let url: URL;
      try {
        url = new URL(args.ApiEndpoint);
      } catch {
        throw new TaskError("States.Runtime", `ApiEndpoint '${args.ApiEndpoint}' is not a URL`);
      }
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
      // W3C Trace Context: the server's spans join the execution's trace, under this
      // call's span (a child of the attempt's). Headers the state sets itself win.
      if (request.trace) {
        headers.traceparent = request.trace.traceparent;
        if (request.trace.tracestate !== undefined) headers.tracestate = request.trace.tracestate;
      }
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
      let response: OutboundResponse;
      try {
        response = await send({
          url,
          method,
          headers,
          ...(body !== undefined ? { body } : {}),
          signal,
        });
      } catch (err) {
        if (request.signal.aborted) throw err;
        const where = `${method} ${url.origin}${url.pathname}`;
        if (err instanceof ResponseTooLarge) {
          throw new TaskError(
            "States.DataLimitExceeded",
            `${where}: the response body is over ${err.limit} bytes (${MAX_RESPONSE_ENV}); stopped reading there`,
          );
        }
        const timedOut =
          err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
        throw new TaskError(
          timedOut ? "States.Timeout" : "States.Http.Socket",
          `${where}: ${err instanceof Error ? err.message : String(err)}`,
        );
      }
      const raw = response.body.toString("utf8");
      const result: Json = {
        StatusCode: response.status,
        StatusText: response.statusText,
        Headers: response.headers,
        ResponseBody: parseBody(raw, response.headers["content-type"] ?? null),
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
