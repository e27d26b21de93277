/**
 * A small HTTP client for the end-to-end tests: real requests over a real socket
 * (global fetch), JSON in and out, the API key chosen per call.
 */
export interface Reply<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface CallOptions {
  /** JSON body (serialized here). */
  body?: unknown;
  /** A raw body (sent as is, with `contentType`). */
  raw?: string | Uint8Array;
  contentType?: string;
  /** The secret to present; `null` sends none. Defaults to the client's key. */
  key?: string | null;
  headers?: Record<string, string>;
}

export class Client {
  constructor(
    readonly baseUrl: string,
    readonly defaultKey: string | null,
  ) {}

  async call<T = any>(method: string, path: string, options: CallOptions = {}): Promise<Reply<T>> {
    const headers: Record<string, string> = { ...(options.headers ?? {}) };
    const key = options.key === undefined ? this.defaultKey : options.key;
    if (key !== null) headers.authorization = `Bearer ${key}`;
    let body: string | Uint8Array | undefined;
    if (options.raw !== undefined) {
      body = options.raw;
      headers["content-type"] = options.contentType ?? "application/json";
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] = options.contentType ?? "application/json";
    }
    const response = await fetch(this.baseUrl + path, {
      method,
      headers,
      ...(body !== undefined ? { body } : {}),
    });
    const text = await response.text();
    let parsed: unknown = text;
    if ((response.headers.get("content-type") ?? "").includes("json") && text !== "") {
      parsed = JSON.parse(text);
    }
    return { status: response.status, headers: response.headers, body: parsed as T, text };
  }

  get<T = any>(path: string, options?: CallOptions): Promise<Reply<T>> {
    return this.call<T>("GET", path, options);
  }

  post<T = any>(path: string, body?: unknown, options: CallOptions = {}): Promise<Reply<T>> {
    return this.call<T>("POST", path, { ...options, ...(body !== undefined ? { body } : {}) });
  }

  put<T = any>(path: string, body?: unknown, options: CallOptions = {}): Promise<Reply<T>> {
    return this.call<T>("PUT", path, { ...options, ...(body !== undefined ? { body } : {}) });
  }

  /** Polls until `check` returns a value (not undefined), or fails after `timeoutMs`. */
  async until<T>(check: () => Promise<T | undefined>, timeoutMs = 10_000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const value = await check();
      if (value !== undefined) return value;
      if (Date.now() > deadline) throw new Error(`condition not met within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}
