import type { ApiErrorBody } from "./types.js";

/**
 * The REST client: same origin, JSON in and out, the pasted API key sent as
 * `Authorization: Bearer` (never a cookie, so there is no CSRF to defend against).
 * The key lives in sessionStorage: it goes when the tab closes.
 */

const KEY_STORAGE = "stepwise.apiKey";

export function storedKey(): string | null {
  try {
    return sessionStorage.getItem(KEY_STORAGE);
  } catch {
    return null;
  }
}

export function storeKey(key: string | null): void {
  if (key === null) sessionStorage.removeItem(KEY_STORAGE);
  else sessionStorage.setItem(KEY_STORAGE, key);
}

export function authHeaders(): Record<string, string> {
  const key = storedKey();
  return key ? { authorization: `Bearer ${key}` } : {};
}

/** An error answer of the API, with the registry's name in `code` (`EnvelopeMismatch`, …). */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details: unknown[] = [],
  ) {
    super(message);
  }
}

export type Query = Record<string, string | number | boolean | undefined>;

export function withQuery(path: string, query: Query = {}): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query))
    if (v !== undefined && v !== "") params.set(k, String(v));
  const text = params.toString();
  return text === "" ? path : `${path}?${text}`;
}

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders(), accept: "application/json" };
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(path, {
    method,
    headers,
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const e = (parsed ?? {}) as Partial<ApiErrorBody>;
    throw new ApiError(
      response.status,
      e.error ?? `HTTP${response.status}`,
      e.message ?? (text || response.statusText),
      e.details ?? [],
    );
  }
  return parsed as T;
}

export const api = {
  get: <T>(path: string, query?: Query) => call<T>("GET", withQuery(path, query)),
  post: <T>(path: string, body?: unknown) => call<T>("POST", path, body ?? {}),
  put: <T>(path: string, body: unknown) => call<T>("PUT", path, body),
  delete: (path: string) => call<undefined>("DELETE", path),
};

/** Path segments of ids (execution ids are ARNs, with colons). */
export const seg = encodeURIComponent;
