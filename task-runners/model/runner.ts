import { headerSafe } from "../http.js";
import { bareResource } from "../resources.js";
import { TaskError, type TaskRunner } from "../runner.js";
import type { ModelEndpoints } from "./endpoints.js";
import {
  bodyInCause,
  classifyFailure,
  failureCause,
  MODEL_ERRORS,
  modelError,
  retryAfterSeconds,
} from "./errors.js";
import { ArgumentError, buildModelCall, UnknownEndpointError } from "./request.js";
import { InvalidAnswer, normaliseCompletion } from "./response.js";
import { modelFetch, type ModelFetch } from "./transport.js";
import { MODEL_RESOURCES } from "./fields.js";

/**
 * `arn:aws:states:::stepwise:model` (short `stepwise:model`): one chat-completions
 * call per attempt. Retries are the state's own Retry (durable, in the history);
 * the runner never loops. Every attempt of one entry into the state sends the same
 * `Idempotency-Key` (the operation key), so a provider or gateway that dedupes
 * answers a retry of a call it already served with its first answer.
 *
 * `Retry-After` on a 429: ASL Retry has its own intervals, so the runner honours the
 * provider's wait by waiting it out before it reports `Model.RateLimited` — the
 * Retry's interval then comes on top — as long as the wait is at most
 * `maxRetryAfterSeconds` (default 30) and fits the call's time limit. A longer wait
 * is not slept in a worker: the failure is reported at once, with
 * `retryAfterSeconds` in the cause for a Catch to act on.
 */
export interface ModelRunnerOptions {
  /** The endpoints (config/ reads the file `STEPWISE_MODEL_ENDPOINTS` names; default none). */
  endpoints?: ModelEndpoints;
  /** Where the API keys that endpoints name by variable are found (config/: the environment at start). */
  env?: Readonly<Record<string, string | undefined>>;
  /** Per-call time limit (default 120 s, or the state's TimeoutSeconds when shorter). */
  timeoutMs?: number;
  /** The longest `Retry-After` waited out in the worker (default 30 s). */
  maxRetryAfterSeconds?: number;
  fetch?: ModelFetch;
  /** How the runner waits out a Retry-After (tests inject a clock). */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export function isModelResource(resource: string): boolean {
  return MODEL_RESOURCES.has(bareResource(resource));
}

export function modelRunner(options: ModelRunnerOptions = {}): TaskRunner {
  const endpoints = options.endpoints ?? {};
  const env = options.env ?? {};
  const doFetch = options.fetch ?? modelFetch;
  const maxWait = options.maxRetryAfterSeconds ?? 30;
  const wait = options.sleep ?? sleep;
  return {
    name: "model",
    handles: isModelResource,
    async run(request) {
      let call;
      try {
        call = buildModelCall(request.input, endpoints);
      } catch (err) {
        if (err instanceof UnknownEndpointError) {
          throw new TaskError(MODEL_ERRORS.endpointNotConfigured, err.message);
        }
        if (err instanceof ArgumentError) {
          throw new TaskError("States.Runtime", `stepwise:model: ${err.message}`);
        }
        throw err;
      }
      const { endpoint, endpointName } = call;
      const key = endpoint.apiKeyEnv !== undefined ? env[endpoint.apiKeyEnv] : undefined;
      if (endpoint.apiKeyEnv !== undefined && !key) {
        // Names the variable, never a value.
        throw new TaskError(
          MODEL_ERRORS.endpointNotConfigured,
          `model endpoint '${endpointName}': the environment variable ${endpoint.apiKeyEnv} is not set on this worker`,
        );
      }
      if (key && !/^[\x21-\x7e]+$/.test(key)) {
        // fetch would refuse the header with a TypeError, reported as a failed connection.
        throw new TaskError(
          MODEL_ERRORS.endpointNotConfigured,
          `model endpoint '${endpointName}': the environment variable ${endpoint.apiKeyEnv} holds characters an HTTP header cannot carry (white space or non-ASCII: a placeholder left in?)`,
        );
      }
      const headers: Record<string, string> = {
        "content-type": "application/json",
        accept: "application/json",
        // One key per operation, not per attempt (task-runners/runner.ts).
        "idempotency-key": headerSafe(request.operationKey),
        "stepwise-attempt": String(request.attempt + 1),
        "x-stepwise-execution": headerSafe(request.executionId),
        "x-stepwise-task": headerSafe(request.taskId),
      };
      if (key) headers.authorization = `Bearer ${key}`;
      const limitMs = Math.min(
        options.timeoutMs ?? 120_000,
        (request.timeoutSeconds ?? Infinity) * 1000,
      );
      const deadline = Date.now() + limitMs;
      const { signal, done } = callSignal(request.signal, limitMs);
      const where = `POST ${endpointName} /chat/completions`;
      let response: Response;
      let text: string;
      try {
        response = await doFetch(call.url, {
          method: "POST",
          headers,
          body: JSON.stringify(call.body),
          // A chat-completions endpoint does not redirect; following one would carry the
          // key to wherever it points (and past the egress policy's first check).
          redirect: "error",
          signal,
        });
        text = await response.text();
      } catch (err) {
        if (request.signal.aborted) throw err;
        const timedOut =
          err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
        // fetch says "fetch failed"; the reason (refused, reset, a redirect) is its cause.
        const reason = err instanceof Error ? err.cause : undefined;
        const message =
          (err instanceof Error ? err.message : String(err)) +
          (reason instanceof Error ? `: ${reason.message}` : "");
        throw modelError(
          timedOut ? MODEL_ERRORS.timeout : MODEL_ERRORS.connectionFailed,
          `${where}: ${timedOut ? `no answer within ${limitMs} ms` : message}`,
          key,
        );
      } finally {
        done();
      }
      const body = parseBody(text);
      if (response.status < 200 || response.status > 299) {
        const answer = {
          status: response.status,
          body,
          retryAfter: response.headers.get("retry-after"),
        };
        const error = classifyFailure(answer);
        if (error === MODEL_ERRORS.rateLimited) {
          const seconds = retryAfterSeconds(answer.retryAfter, Date.now());
          if (
            seconds !== undefined &&
            seconds <= maxWait &&
            Date.now() + seconds * 1000 < deadline
          ) {
            await wait(seconds * 1000, request.signal);
          }
        }
        throw modelError(error, failureCause(answer, Date.now()), key);
      }
      try {
        return normaliseCompletion(body, {
          endpoint,
          requestedModel: call.body.model as string,
          wantsJson: call.wantsJson,
        });
      } catch (err) {
        if (!(err instanceof InvalidAnswer)) throw err;
        throw modelError(
          err.error,
          JSON.stringify({
            statusCode: response.status,
            message: err.message,
            body: bodyInCause(body),
          }),
          key,
        );
      }
    },
  };
}

/**
 * A call's signal: the worker's own, or its deadline. Built by hand rather than
 * with `AbortSignal.any` and `AbortSignal.timeout`, which keep a timer and both
 * signals alive until the deadline (two minutes by default) after every call:
 * an agent makes hundreds of calls a second. `done` lets go of both at once.
 */
function callSignal(parent: AbortSignal, limitMs: number): { signal: AbortSignal; done(): void } {
  const controller = new AbortController();
  const onAbort = () => controller.abort(parent.reason);
  if (parent.aborted) controller.abort(parent.reason);
  else parent.addEventListener("abort", onAbort, { once: true });
  // setTimeout fires at once past 2^31 - 1 ms: a longer limit is no limit.
  const timer =
    limitMs <= 2 ** 31 - 1
      ? setTimeout(
          () =>
            controller.abort(new DOMException(`no answer within ${limitMs} ms`, "TimeoutError")),
          limitMs,
        )
      : undefined;
  return {
    signal: controller.signal,
    done() {
      clearTimeout(timer);
      parent.removeEventListener("abort", onAbort);
    },
  };
}

function parseBody(text: string): unknown {
  try {
    return text === "" ? null : (JSON.parse(text) as unknown);
  } catch {
    return text;
  }
}

/** Waits, or rejects as soon as the worker hands the job back (the attempt runs again). */
function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason as Error);
    const timer = setTimeout(() => {
      signal.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason as Error);
    };
    signal.addEventListener("abort", onAbort, { once: true });
  });
}
