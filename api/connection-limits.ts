import type { Server, ServerOptions } from "node:http";
import type { Socket } from "node:net";
import type { FastifyServerOptions } from "fastify";
import { apiError, type ApiError } from "./errors.js";

/**
 * How long a client may take and how many connections it may hold. Without these a
 * slow client (unfinished headers, a body that never arrives) kept a socket open
 * for minutes, and a thousand of them held a thousand sockets (issue 13).
 *
 * Node 20's `requestTimeout` covers RECEIVING the request (headers and body): it
 * stops counting once the request is complete, so a `?wait=` start, an activity
 * long poll or an SSE stream, which spend their time answering, are not cut by it
 * (test/e2e/slow-clients.test.ts checks this). `headersTimeout` is the shorter limit
 * for the headers alone. Node checks both every `connectionsCheckingInterval`
 * (30 s by default, which would make a 10 s limit a 40 s one), so the interval
 * follows the shorter timeout.
 */
export interface ConnectionLimits {
  /** Whole request received within this (ms); 0 turns it off. */
  requestTimeoutMs: number;
  /** Headers received within this (ms); at most `requestTimeoutMs`. */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this (ms). */
  keepAliveTimeoutMs: number;
  /** Connections open at once; more are closed as they arrive. 0: no limit. */
  maxConnections: number;
  /** Requests served on one connection before it is closed. 0: no limit. */
  maxRequestsPerSocket: number;
}

export const DEFAULT_CONNECTION_LIMITS: ConnectionLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  // Above the 60 s idle timeout of common load balancers, so they close first.
  keepAliveTimeoutMs: 72_000,
  maxConnections: 10_000,
  maxRequestsPerSocket: 0,
};

/** Fastify's options for these limits (and Node's, through `http`). */
export function connectionOptions(
  limits: ConnectionLimits,
): Pick<
  FastifyServerOptions,
  "requestTimeout" | "keepAliveTimeout" | "maxRequestsPerSocket" | "clientErrorHandler"
> & { http: ServerOptions } {
  const request = limits.requestTimeoutMs;
  // Node refuses a headers timeout longer than the request timeout.
  const headers =
    request > 0 ? Math.min(limits.headersTimeoutMs, request) : limits.headersTimeoutMs;
  const shortest = Math.min(...[request, headers].filter((ms) => ms > 0));
  return {
    requestTimeout: request,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    maxRequestsPerSocket: limits.maxRequestsPerSocket,
    http: {
      headersTimeout: headers,
      requestTimeout: request,
      connectionsCheckingInterval: Number.isFinite(shortest)
        ? Math.max(100, Math.min(1000, Math.floor(shortest / 4)))
        : 30_000,
    },
    clientErrorHandler: answerClientError,
  };
}

export function applyConnectionLimits(
  server: Pick<Server, "maxConnections">,
  limits: ConnectionLimits,
): void {
  if (limits.maxConnections > 0) server.maxConnections = limits.maxConnections;
}

/**
 * Errors Node raises before a request reaches fastify (a request line it cannot
 * parse, such as a space in the path; headers or a URL over 16 KiB; a client too
 * slow) answered from the registry like every other error, then the socket closed.
 */
export function answerClientError(error: Error & { code?: string }, socket: Socket): void {
  if (error.code === "ECONNRESET" || socket.destroyed) return;
  const answer = clientErrorAnswer(error.code);
  // As Node's own handler: no answer when one was already begun on this socket (a
  // response went out, then the rest of its request did not parse); two answers
  // to one request would be worse than none.
  const current = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage;
  if (socket.writable && !current?.headersSent) {
    const body = JSON.stringify(answer.toBody());
    socket.write(
      `HTTP/1.1 ${answer.status} ${statusText(answer.status)}\r\nConnection: close\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

export function clientErrorAnswer(code: string | undefined): ApiError {
  switch (code) {
    case "ERR_HTTP_REQUEST_TIMEOUT":
      return apiError("RequestTimeout");
    case "HPE_HEADER_OVERFLOW":
      return apiError("RequestHeaderFieldsTooLarge");
    default:
      return apiError("InvalidRequest", {
        location: "HTTP request",
        reason: `it is not well-formed HTTP/1.1 (${code ?? "unknown"}); a space or a control character in the path must be percent-encoded`,
      });
  }
}

function statusText(status: number): string {
  return status === 408
    ? "Request Timeout"
    : status === 431
      ? "Request Header Fields Too Large"
      : "Bad Request";
}
