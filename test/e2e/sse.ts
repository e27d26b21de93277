/**
 * A Server-Sent Events reader for the tests: a real streaming fetch (as the console
 * reads the streams, since EventSource cannot send an Authorization header) and a
 * parser of the `text/event-stream` format.
 */
export interface SseEvent {
  id?: string;
  event: string;
  data: any;
}

export interface SseStream {
  status: number;
  headers: Headers;
  /** The body when the server answered with an error instead of a stream. */
  body?: any;
  /** The next message (comments skipped); undefined once the server has closed the stream. */
  next(timeoutMs?: number): Promise<SseEvent | undefined>;
  close(): void;
}

export async function openStream(
  url: string,
  options: { key?: string | null; headers?: Record<string, string> } = {},
): Promise<SseStream> {
  const abort = new AbortController();
  const headers: Record<string, string> = { accept: "text/event-stream", ...options.headers };
  if (options.key) headers.authorization = `Bearer ${options.key}`;
  const response = await fetch(url, { headers, signal: abort.signal });
  if (!(response.headers.get("content-type") ?? "").startsWith("text/event-stream")) {
    const text = await response.text();
    return {
      status: response.status,
      headers: response.headers,
      body: text ? JSON.parse(text) : undefined,
      next: async () => undefined,
      close: () => abort.abort(),
    };
  }
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let done = false;
  // A read that outlived a timed-out next() is kept for the next call: its chunk is not lost.
  let pending: ReturnType<typeof reader.read> | undefined;
  const parseOne = (): SseEvent | undefined | null => {
    for (;;) {
      const end = buffer.indexOf("\n\n");
      if (end < 0) return null;
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const message: Partial<SseEvent> & { data?: string } = {};
      let data: string[] = [];
      for (const line of block.split("\n")) {
        if (line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        const value = colon < 0 ? "" : line.slice(colon + 1).replace(/^ /, "");
        if (field === "id") message.id = value;
        else if (field === "event") message.event = value;
        else if (field === "data") data.push(value);
      }
      if (data.length === 0 && message.event === undefined) continue; // comment or retry
      const parsed = {
        event: message.event ?? "message",
        data: JSON.parse(data.join("\n")),
      } as SseEvent;
      if (message.id !== undefined) parsed.id = message.id;
      data = [];
      return parsed;
    }
  };
  return {
    status: response.status,
    headers: response.headers,
    async next(timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const parsed = parseOne();
        if (parsed) return parsed;
        if (done) return undefined;
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`no event within ${timeoutMs} ms`);
        let timer: NodeJS.Timeout | undefined;
        pending ??= reader.read();
        const chunk = await Promise.race([
          pending,
          new Promise<"timeout">((resolve) => (timer = setTimeout(() => resolve("timeout"), left))),
        ]);
        clearTimeout(timer);
        if (chunk === "timeout") throw new Error(`no event within ${timeoutMs} ms`);
        pending = undefined;
        if (chunk.done) done = true;
        else buffer += decoder.decode(chunk.value, { stream: true });
      }
    },
    close: () => abort.abort(),
  };
}
