import { LogController, type FastifyInstance } from "fastify";

declare module "fastify" {
  interface FastifyRequest {
    /** The error a 5xx answered, told on the request's one log line with its stack. */
    failure?: unknown;
  }
}

/**
 * One log line per request, at a level by what it says: the web console polls, and
 * fastify's own two `info` lines per request ("incoming request", "request completed")
 * buried everything else a terminal shows. The line is written when the response has
 * been sent (`onResponse`), with the request's bindings (`reqId`, a `traceparent`'s
 * `traceId`, the `executionId` a start adds) and:
 *
 * - `error` for a 5xx, with the error and its stack (`err`), but
 * - `warn` for a 503 (Redis unavailable: not a bug, and told by the connection log
 *   once per outage), with its reason and no stack;
 * - `info` for a 4xx, and for a request that took `slowRequestMs` or longer;
 * - `debug` for everything else.
 */

/** A request that takes this long is told at `info` whatever it answered (ms). */
export const DEFAULT_SLOW_REQUEST_MS = 1000;

export type RequestLogLevel = "error" | "warn" | "info" | "debug";

export function requestLogLevel(
  statusCode: number,
  responseTimeMs: number,
  slowRequestMs: number,
): RequestLogLevel {
  if (statusCode === 503) return "warn";
  if (statusCode >= 500) return "error";
  if (statusCode >= 400 || responseTimeMs >= slowRequestMs) return "info";
  return "debug";
}

/** fastify's options that turn its own per-request lines off (our line replaces them). */
export function requestLogOptions(): { logController: LogController } {
  // The top-level `disableRequestLogging` option is deprecated (FSTDEP023) and
  // would print a warning at every start.
  return { logController: new LogController({ disableRequestLogging: true }) };
}

export function registerRequestLog(app: FastifyInstance, slowRequestMs: number): void {
  app.addHook("onResponse", async (request, reply) => {
    const statusCode = reply.statusCode;
    const responseTime = Math.round(reply.elapsedTime * 10) / 10;
    const level = requestLogLevel(statusCode, responseTime, slowRequestMs);
    // reply.log: a start's handler binds the execution it started to it.
    reply.log[level](
      {
        method: request.method,
        url: request.url,
        statusCode,
        responseTime,
        ...(request.caller ? { caller: request.caller.name } : {}),
        ...(request.failure === undefined
          ? {}
          : statusCode === 503
            ? { reason: request.failure instanceof Error ? request.failure.message : "" }
            : { err: request.failure }),
      },
      "request completed",
    );
  });
}
