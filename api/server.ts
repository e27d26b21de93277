import { parseTraceparent } from "../runtime/tracing/trace-context.js";
import { isConnectionError } from "../runtime/store/connection-errors.js";
import type { Admission } from "./admission.js";
import {
  applyConnectionLimits,
  connectionOptions,
  DEFAULT_CONNECTION_LIMITS,
  type ConnectionLimits,
} from "./connection-limits.js";
import { defaultRunners, servedBy, type TaskRunner } from "../task-runners/index.js";
import { isChildExecution, isEventWait } from "../task-runners/resources.js";
import Fastify, {
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
} from "fastify";
import { RuntimeError, type Runtime } from "../runtime/contract/index.js";
import { authorize, type ApiCaller, type ApiKey, type Permission } from "./auth.js";
import { isTextBody, MAX_BODY_BYTES, registerBodyParsers } from "./body.js";
import { ApiError, apiError, isApiErrorName } from "./errors.js";
import type { Registry } from "prom-client";
import {
  createRegistry,
  HttpMetrics,
  isMetricsSource,
  registerRuntimeMetrics,
  type MetricsSource,
} from "./metrics.js";
import { OpenApiCollector } from "./openapi.js";
import { awsApiPlugin } from "./aws/index.js";
import { approvalsPlugin } from "./plugins/approvals.js";
import { auditPlugin } from "./plugins/audit.js";
import { consolePlugin } from "./plugins/console.js";
import { eventsPlugin } from "./plugins/events.js";
import { mePlugin } from "./plugins/me.js";
import { operationsPlugin } from "./plugins/operations.js";
import { activitiesPlugin } from "./plugins/activities.js";
import { docsPlugin } from "./plugins/docs.js";
import { executionsPlugin } from "./plugins/executions.js";
import { healthPlugin } from "./plugins/health.js";
import { metricsPlugin } from "./plugins/metrics.js";
import { stateMachinesPlugin } from "./plugins/state-machines.js";
import { taskTokensPlugin } from "./plugins/task-tokens.js";
import { testStatePlugin } from "./plugins/test-state.js";
import { versionsPlugin } from "./plugins/versions.js";
import { schedulesPlugin } from "./plugins/schedules.js";
import { rulesPlugin } from "./plugins/rules.js";
import { busEventsPlugin } from "./plugins/bus-events.js";
import { closeQueryString } from "./query.js";
import { DEFAULT_SLOW_REQUEST_MS, registerRequestLog, requestLogOptions } from "./request-log.js";
import { lazySerializers, registerValidation, validationError } from "./validation.js";

declare module "fastify" {
  /** Documentation keywords the OpenAPI document takes from each route's schema. */
  interface FastifySchema {
    summary?: string;
    description?: string;
    tags?: string[];
  }
  interface FastifyContextConfig {
    /** What the route needs from the caller's API key; routes without one are public. */
    permission?: Permission;
    /** The route reads a definition from a YAML/JSON text body (Content-Type application/yaml …). */
    textBody?: boolean;
    /** Left out of the OpenAPI document (the docs routes themselves). */
    hidden?: boolean;
  }
  interface FastifyRequest {
    /** Who is asking (the API key's name); set by the auth hook, recorded in the history. */
    caller?: ApiCaller;
  }
}

export interface ServerOptions {
  runtime: Runtime;
  /** Parsed STEPWISE_API_KEYS; empty turns authentication off (bind to loopback then). */
  apiKeys?: readonly ApiKey[];
  /**
   * fastify's built-in pino logger: `true`, `false` or pino options ({level: "info"}).
   * Each request is one line (request-log.ts): `debug`, or `info`/`error` when it failed
   * or was slow.
   */
  logger?: FastifyServerOptions["logger"];
  /** A request that takes this long (ms) is logged at `info`; default 1000. */
  slowRequestMs?: number;
  /** Readiness of the dependencies (a Redis PING); `/health` answers 503 when it throws. */
  health?: () => Promise<void>;
  /**
   * Whether Redis is connected now. When it is not, every request that needs it
   * answers 503 ServiceUnavailable at once instead of waiting for a reconnect (which
   * can take as long as the outage); `/health`, `/metrics`, `/docs` and the console
   * are served as ever. Default: always connected.
   */
  redisConnected?: () => boolean;
  /** Runtime figures for /metrics; defaults to the runtime itself when it has `metrics()`. */
  metrics?: MetricsSource;
  /**
   * The prom-client registry /metrics shows; pass the one a worker in the same process
   * counts into (`workerMetrics`) to show its series too. Default: a new registry with
   * the process's default series. The server adds its HTTP and runtime series to it.
   */
  registry?: Registry;
  /** The longest `?wait=` a start may block for (seconds). */
  maxWaitSeconds?: number;
  /** Reported in the OpenAPI document. */
  version?: string;
  /** The built console to serve at /console/ (default: console/dist, when built). */
  consoleDir?: string;
  /** Start admission control (admission.ts); none when absent. */
  admission?: Admission;
  /**
   * Put before each request id (`req-<n>`, the log's `reqId`, an internal error's
   * id, AWS's `x-amzn-requestid`): `serve --api-processes` gives each process its
   * own, so the ids of processes answering on one port never collide.
   */
  requestIdPrefix?: string;
  /** Timeouts and connection limits (connection-limits.ts); default DEFAULT_CONNECTION_LIMITS. */
  limits?: ConnectionLimits;
  /** Whether the service's workers can call a Task Resource; default: the default runners. */
  serves?: (resource: string) => boolean;
  /**
   * What TestState calls for a Task without a mock: the workers' runners, under their
   * egress policy (cli/commands/serve.ts). Default: the default runners (default egress).
   */
  taskRunners?: readonly TaskRunner[];
}

/** Options every resource plugin receives. */
export interface PluginOptions {
  runtime: Runtime;
  maxWaitSeconds: number;
  /** Whether this service can call a Task Resource (UNSERVED_RESOURCE warnings). */
  serves: (resource: string) => boolean;
  /** The task runners TestState calls (ServerOptions.taskRunners). */
  runners: readonly TaskRunner[];
  admission?: Admission;
}

/**
 * Every worker serves `stepwise:waitForEvent` (runtime/triggers/events/event-wait-runner.ts)
 * and `states:startExecution` in all its patterns (runtime/children/).
 */
function servesEventWaits(serves: (resource: string) => boolean): (resource: string) => boolean {
  return (resource) => isEventWait(resource) || isChildExecution(resource) || serves(resource);
}

/** Task tokens travel in the path and may be up to 1024 characters (AWS's limit). */
const MAX_PARAM_LENGTH = 1100;

/** `<prefix>req-1`, `<prefix>req-2`…, as fastify's own ids with a prefix. */
function requestIds(prefix: string): () => string {
  let next = 0;
  return () => `${prefix}req-${(next = (next + 1) % Number.MAX_SAFE_INTEGER)}`;
}

export async function buildServer(options: ServerOptions): Promise<FastifyInstance> {
  const apiKeys = options.apiKeys ?? [];
  const limits = options.limits ?? DEFAULT_CONNECTION_LIMITS;
  const app = Fastify({
    ...connectionOptions(limits),
    logger: options.logger ?? false,
    ...requestLogOptions(),
    ...(options.requestIdPrefix !== undefined
      ? { genReqId: requestIds(options.requestIdPrefix) }
      : {}),
    bodyLimit: MAX_BODY_BYTES,
    routerOptions: { maxParamLength: MAX_PARAM_LENGTH },
    schemaController: { compilersFactory: { buildSerializer: lazySerializers.buildSerializer } },
    // Bad percent-encoding in a URL answers from the registry like any other bad input.
    frameworkErrors: (error, request, reply) => {
      const longest = Math.max(...request.url.split(/[/?]/).map((s) => s.length));
      const reason =
        longest > MAX_PARAM_LENGTH
          ? `a path segment is longer than ${MAX_PARAM_LENGTH} characters`
          : "it is not validly percent-encoded";
      void sendError(reply, request, apiError("InvalidRequest", { location: "URL", reason }));
    },
  });

  // The log lines of a request that carries W3C `traceparent` name its trace, as the
  // worker's lines about the execution it starts will (runtime/tracing/logger.ts).
  app.setChildLoggerFactory((logger, bindings, childOptions, raw) => {
    const traceId = parseTraceparent(raw.headers.traceparent)?.traceId;
    return logger.child(traceId ? { ...bindings, traceId } : bindings, childOptions);
  });

  applyConnectionLimits(app.server, limits);
  registerBodyParsers(app);
  registerValidation(app);

  const openapi = new OpenApiCollector();
  app.addHook("onRoute", closeQueryString);
  app.addHook("onRoute", (route) => openapi.add(route));

  app.addHook("onRequest", async (request) => {
    const permission = request.routeOptions.config?.permission ?? "public";
    const caller = authorize(apiKeys, request, permission);
    if (caller) request.caller = caller;
  });

  const connected = options.redisConnected;
  if (connected) {
    app.addHook("onRequest", async (request) => {
      if (connected()) return;
      const url = request.routeOptions.url ?? "";
      // What needs Redis: the native API and the AWS endpoint.
      if (!url.startsWith("/v1/") && !(url === "/" && request.method === "POST")) return;
      throw apiError("ServiceUnavailable", { reason: "redis: unavailable" });
    });
  }

  app.addHook("preValidation", async (request) => {
    // No body at all (or an empty JSON one) reads as `{}`: optional bodies (stop,
    // failure, start) need none, and required fields are then reported by name.
    if (request.body === undefined) request.body = {};
    // A YAML or text body is only meaningful where a definition is expected.
    if (isTextBody(request.headers["content-type"]) && !request.routeOptions.config?.textBody) {
      throw apiError("UnsupportedMediaType", {
        contentType: request.headers["content-type"] ?? "",
      });
    }
  });

  const registry = options.registry ?? createRegistry();
  const http = new HttpMetrics(registry);
  app.addHook("onResponse", async (request, reply) => {
    // The route pattern, not the URL: ids in URLs would make unbounded label sets.
    const route = request.routeOptions.url ?? "unmatched";
    http.record(request.method, route, reply.statusCode, reply.elapsedTime / 1000);
  });
  registerRequestLog(app, options.slowRequestMs ?? DEFAULT_SLOW_REQUEST_MS);

  app.setErrorHandler((error, request, reply) => sendError(reply, request, error));
  app.setNotFoundHandler((request, reply) =>
    sendError(
      reply,
      request,
      apiError("RouteNotFound", { method: request.method, url: request.url.split("?")[0]! }),
    ),
  );

  const runners = options.taskRunners ?? defaultRunners();
  const pluginOptions: PluginOptions = {
    runtime: options.runtime,
    maxWaitSeconds: options.maxWaitSeconds ?? 300,
    serves: servesEventWaits(options.serves ?? servedBy(runners)),
    runners,
    ...(options.admission ? { admission: options.admission } : {}),
  };
  await app.register(stateMachinesPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(executionsPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(auditPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(taskTokensPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(activitiesPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(approvalsPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(eventsPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(mePlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(operationsPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(versionsPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(testStatePlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(schedulesPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(rulesPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(busEventsPlugin, { ...pluginOptions, prefix: "/v1" });
  await app.register(awsApiPlugin, { ...pluginOptions, apiKeys });
  const metricsSource =
    options.metrics ?? (isMetricsSource(options.runtime) ? options.runtime : undefined);
  registerRuntimeMetrics(registry, metricsSource, (err) =>
    app.log.warn({ err }, "runtime metrics unavailable"),
  );
  await app.register(healthPlugin, { health: options.health });
  await app.register(metricsPlugin, { registry });
  await app.register(docsPlugin, { openapi, version: options.version ?? "0.1.0" });
  await app.register(consolePlugin, options.consoleDir ? { root: options.consoleDir } : {});
  return app;
}

/** Maps anything thrown to a registry entry and answers `{error, message, details}`. */
function toApiError(error: unknown, request: FastifyRequest): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof RuntimeError) {
    // The runtime's message is more precise than our template (it knows the name/id).
    return new ApiError(error.code, error.message, error.details);
  }
  const e = error as Partial<FastifyError> & { validationContext?: string };
  if (e.validation) return validationError(e.validation as never, e.validationContext);
  switch (e.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return apiError("PayloadTooLarge", { limit: MAX_BODY_BYTES });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return apiError("UnsupportedMediaType", {
        contentType: request.headers["content-type"] ?? "(none)",
      });
  }
  // Other fastify client errors (bad Content-Length, aborted body…) are the client's.
  if (typeof e.statusCode === "number" && e.statusCode >= 400 && e.statusCode < 500) {
    return apiError("InvalidRequest", { location: "request", reason: e.message ?? "malformed" });
  }
  if (e.name && isApiErrorName(e.name)) return new ApiError(e.name, e.message ?? "", []);
  // Redis went away under the request (the API's runtime fails fast: runtime/store/redis.ts).
  if (isConnectionError(error) || e.name === "MaxRetriesPerRequestError") {
    return apiError("ServiceUnavailable", { reason: "redis: unavailable" });
  }
  return apiError("InternalError", { requestId: request.id });
}

function sendError(reply: FastifyReply, request: FastifyRequest, error: unknown): FastifyReply {
  const apiErr = toApiError(error, request);
  // Client errors are the client's business (the request's line says which); 5xx are
  // ours: the request's line (request-log.ts) carries the original error and stack.
  if (apiErr.status >= 500) request.failure = error;
  if (apiErr.status === 401) reply.header("www-authenticate", 'Bearer realm="stepwise"');
  const retryAfter = (error as { retryAfterSeconds?: unknown }).retryAfterSeconds;
  if (typeof retryAfter === "number") reply.header("retry-after", String(retryAfter));
  // Redis unavailable: worth trying again shortly.
  else if (apiErr.status === 503) reply.header("retry-after", "5");
  return reply.code(apiErr.status).type("application/json").send(apiErr.toBody());
}
