import { SseParser, type SseMessage } from "./sse-parser.js";

/**
 * Subscribes to an SSE route with fetch() (so the API key travels as a Bearer
 * header), reconnecting with `Last-Event-ID` until the server says `end` or the
 * caller aborts. A route that does not exist (404) or a key that may not read it
 * throws `SseUnavailable` at once, so callers fall back to polling.
 */

export class SseUnavailable extends Error {
  constructor(readonly status: number) {
    super(`event stream unavailable (HTTP ${status})`);
  }
}

export interface SubscribeOptions {
  url: string;
  headers: Record<string, string>;
  signal: AbortSignal;
  onMessage: (message: SseMessage) => void;
  /** Resume after this id (the last one the caller has). */
  lastEventId?: string;
  /** Stop reconnecting after a message of this event type (`end`). */
  endEvent?: string;
}

const RECONNECT_MS = [500, 1000, 2000, 5000];

export async function subscribe(options: SubscribeOptions): Promise<void> {
  let lastEventId = options.lastEventId ?? "";
  let failures = 0;
  while (!options.signal.aborted) {
    let finished = false;
    try {
      const headers: Record<string, string> = { ...options.headers, accept: "text/event-stream" };
      if (lastEventId !== "") headers["last-event-id"] = lastEventId;
      const response = await fetch(options.url, { headers, signal: options.signal });
      if (response.status === 404 || response.status === 401 || response.status === 403) {
        throw new SseUnavailable(response.status);
      }
      if (!response.ok || !response.body) throw new Error(`HTTP ${response.status}`);
      failures = 0;
      const parser = new SseParser();
      const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const message of parser.push(value)) {
          lastEventId = message.lastEventId;
          options.onMessage(message);
          if (message.event === options.endEvent) finished = true;
        }
      }
    } catch (err) {
      if (err instanceof SseUnavailable) throw err;
      if (options.signal.aborted) return;
    }
    if (finished) return;
    const delay = RECONNECT_MS[Math.min(failures++, RECONNECT_MS.length - 1)]!;
    await sleep(delay, options.signal);
  }
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        resolve();
      },
      { once: true },
    );
  });
}
