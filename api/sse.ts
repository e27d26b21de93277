import type { FastifyReply, FastifyRequest } from "fastify";

/**
 * Server-Sent Events (the WHATWG `text/event-stream` format) for the live routes.
 *
 * The reply is hijacked: fastify stops managing it and the stream writes to the
 * socket until its source ends, the client goes away, or the server closes
 * (`closeAll`, from a preClose hook: an open stream would otherwise hold
 * `app.close()` forever). A comment line every `heartbeatMs` keeps proxies and
 * idle-timeouts from cutting a quiet stream, and tells a dead client from a
 * live one (the write fails).
 */
export interface SseMessage {
  /** Sent as `id:`; the client sends the last one back as `Last-Event-ID` to resume. */
  id?: string;
  event: string;
  data: unknown;
}

export class EventStreams {
  private readonly open = new Set<AbortController>();

  constructor(private readonly heartbeatMs = 15_000) {}

  /**
   * Streams what `source` yields. Call it after every check that can answer with an
   * error (auth, existence): once the headers are out, the status is 200.
   */
  async send(
    request: FastifyRequest,
    reply: FastifyReply,
    source: (signal: AbortSignal) => AsyncIterable<SseMessage>,
  ): Promise<void> {
    const abort = new AbortController();
    this.open.add(abort);
    const raw = reply.raw;
    reply.hijack();
    raw.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      // nginx buffers responses unless told not to; a buffered stream is not live.
      "x-accel-buffering": "no",
    });
    if (request.method === "HEAD") {
      // A HEAD has no body to stream, and Node sends its headers only when it ends.
      this.open.delete(abort);
      raw.end();
      return;
    }
    raw.flushHeaders();
    // How long a client waits before reconnecting after the stream drops (ms).
    raw.write("retry: 2000\n\n");
    const gone = (): void => abort.abort();
    request.raw.on("close", gone);
    raw.on("close", gone);
    raw.on("error", gone);
    const heartbeat = setInterval(() => {
      if (!raw.writableEnded) raw.write(": ping\n\n");
    }, this.heartbeatMs);
    heartbeat.unref();
    try {
      for await (const message of source(abort.signal)) {
        if (abort.signal.aborted) break;
        if (!raw.write(format(message))) await drained(raw, abort.signal);
      }
    } catch (err) {
      // Headers are out: the failure can only be told in the stream itself.
      request.log.warn({ err }, "event stream failed");
      if (!raw.writableEnded && !abort.signal.aborted) {
        raw.write(
          format({
            event: "error",
            data: { error: "InternalError", message: "The stream failed; reconnect to resume" },
          }),
        );
      }
    } finally {
      clearInterval(heartbeat);
      request.raw.off("close", gone);
      this.open.delete(abort);
      if (!raw.writableEnded) raw.end();
    }
  }

  /** Ends every open stream (the server is closing). */
  closeAll(): void {
    for (const abort of this.open) abort.abort();
  }
}

/** One message; `data` is JSON on one line (JSON.stringify writes no raw newline). */
export function format(message: SseMessage): string {
  const id = message.id !== undefined ? `id: ${message.id}\n` : "";
  return `${id}event: ${message.event}\ndata: ${JSON.stringify(message.data)}\n\n`;
}

/**
 * Where a client resumes: the `Last-Event-ID` header (what EventSource sends on
 * reconnect) or, for clients that cannot set headers on the first request, `?after=`.
 */
export function lastEventId(
  request: FastifyRequest,
  after: string | undefined,
): string | undefined {
  const header = request.headers["last-event-id"];
  if (typeof header === "string" && header.trim() !== "") return header.trim();
  return after;
}

function drained(raw: NodeJS.WritableStream, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const done = (): void => {
      raw.off("drain", done);
      signal.removeEventListener("abort", done);
      resolve();
    };
    raw.on("drain", done);
    signal.addEventListener("abort", done);
  });
}
