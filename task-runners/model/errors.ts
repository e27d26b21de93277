import { TaskError } from "../runner.js";

/**
 * The errors a model task fails with, named so that Retry and Catch can target them
 * (the `States.` prefix is reserved for ASL's own). Every cause is JSON carrying the
 * provider's status and error body, so a Catch can read what the provider said.
 */
export const MODEL_ERRORS = {
  /** 429: retry later; `retryAfterSeconds` in the cause when the provider said. */
  rateLimited: "Model.RateLimited",
  /** 5xx: the provider failed. */
  serverError: "Model.ServerError",
  /** No answer within the runner's timeout (or the state's TimeoutSeconds). */
  timeout: "Model.Timeout",
  /** The socket failed before an answer (DNS, refused, reset). */
  connectionFailed: "Model.ConnectionFailed",
  /** The conversation does not fit the model's context window. */
  contextLengthExceeded: "Model.ContextLengthExceeded",
  /** The provider's content filter refused the request or the answer. */
  contentFiltered: "Model.ContentFiltered",
  /** An answer that is not a chat completion, unparseable tool arguments, or not JSON when a schema was asked. */
  invalidResponse: "Model.InvalidResponse",
  /** Another 4xx (bad key, unknown model, bad request): retrying the same request will not help. */
  requestRejected: "Model.RequestRejected",
  /** The state names an endpoint the worker does not have, or its key variable is unset. */
  endpointNotConfigured: "Model.EndpointNotConfigured",
} as const;

/** What a failed answer looked like, enough to name its error. */
export interface FailedAnswer {
  status: number;
  /** The body, parsed when it was JSON. */
  body: unknown;
  /** The `Retry-After` header, if any. */
  retryAfter: string | null;
}

/** `Retry-After` (RFC 9110 §10.2.3) in seconds: delay-seconds or an HTTP-date; undefined when absent or unreadable. */
export function retryAfterSeconds(header: string | null, now: number): number | undefined {
  if (header === null || header.trim() === "") return undefined;
  const text = header.trim();
  if (/^\d+(\.\d+)?$/.test(text)) return Number(text);
  const at = Date.parse(text);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, (at - now) / 1000);
}

/** The provider's error code and message, in OpenAI's shape `{error: {code, type, message}}` or flat. */
function providerError(body: unknown): { code: string; message: string } {
  const err =
    typeof body === "object" && body !== null && "error" in body
      ? (body as { error: unknown }).error
      : body;
  if (typeof err === "string") return { code: "", message: err };
  if (typeof err !== "object" || err === null) return { code: "", message: "" };
  const o = err as Record<string, unknown>;
  const code = [o.code, o.type].filter((v) => typeof v === "string").join(" ");
  return { code, message: typeof o.message === "string" ? o.message : "" };
}

/** The ASL error name of a non-2xx answer (pure: unit-tested against providers' bodies). */
export function classifyFailure(answer: FailedAnswer): string {
  const { status } = answer;
  if (status === 429) return MODEL_ERRORS.rateLimited;
  if (status >= 500) return MODEL_ERRORS.serverError;
  if (status === 408) return MODEL_ERRORS.timeout;
  const { code, message } = providerError(answer.body);
  const said = `${code} ${message}`.toLowerCase();
  // OpenAI: code "context_length_exceeded"; vLLM, llama.cpp and others only say it in words.
  if (/context_length|context length|maximum context|too many tokens|context window/.test(said)) {
    return MODEL_ERRORS.contextLengthExceeded;
  }
  if (/content_filter|content_policy|content management policy|safety/.test(said)) {
    return MODEL_ERRORS.contentFiltered;
  }
  return MODEL_ERRORS.requestRejected;
}

/** How much of a provider's body a cause keeps (a gateway's HTML error page can be large). */
export const MAX_BODY_IN_CAUSE = 8192;

/** The body as a cause carries it: whole when small, else its text cut at the limit. */
export function bodyInCause(body: unknown): unknown {
  const text = typeof body === "string" ? body : JSON.stringify(body ?? null);
  if (text.length <= MAX_BODY_IN_CAUSE) return body ?? null;
  return `${text.slice(0, MAX_BODY_IN_CAUSE)}… (${text.length} characters)`;
}

/** The cause of a failed answer: JSON with the status, the provider's body and the wait asked. */
export function failureCause(answer: FailedAnswer, now: number): string {
  const cause: Record<string, unknown> = {
    statusCode: answer.status,
    body: bodyInCause(answer.body),
  };
  const wait = retryAfterSeconds(answer.retryAfter, now);
  if (wait !== undefined) cause.retryAfterSeconds = wait;
  return JSON.stringify(cause);
}

/** A model error whose cause never carries the key (providers echo a bad key back, partly or whole). */
export function modelError(error: string, cause: string, secret: string | undefined): TaskError {
  return new TaskError(error, redact(cause, secret));
}

export function redact(text: string, secret: string | undefined): string {
  if (!secret) return text;
  // Also the key's distinctive head: OpenAI answers a bad key as "sk-abc***xyz".
  let out = text.split(secret).join("[redacted]");
  if (secret.length >= 12) out = out.split(secret.slice(0, 8)).join("[redacted]");
  return out;
}
