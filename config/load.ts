import { listenAddress, parseApiKeys, type ApiKey } from "../api/auth.js";
import { DEFAULT_ADMISSION, type AdmissionSettings } from "../api/admission.js";
import { DEFAULT_CONNECTION_LIMITS, type ConnectionLimits } from "../api/connection-limits.js";
import type { PayloadPolicy } from "../engine/core/payload-ref.js";
import { shardsFromEnv, workerShardsFromEnv } from "../runtime/shards/shards.js";
import { WORKER_DEFAULTS, type RuntimeSettings } from "../runtime/settings.js";
import { parseEgressAllow, type EgressPolicy } from "../task-runners/egress.js";
import { MAX_RESPONSE_BYTES } from "../task-runners/http.js";
import { readSigningKey } from "../runtime/audit/signing.js";
import { parseEndpoints, type ModelEndpoints } from "../task-runners/model/endpoints.js";
import { readFileSync } from "node:fs";
import { AwsEndpointError, parseAwsEndpoints } from "../task-runners/aws/config.js";
import { ConfigError, Reader, type Environment } from "./values.js";
import { variable } from "./variables.js";

export const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

/**
 * Everything a Stepwise process is told, validated. `stepwise serve` and
 * `stepwise worker` build one from their environment and flags (loadConfig) and
 * hand its parts to the API, the runtime, the workers and the task runners; none
 * of those reads the environment itself.
 */
export interface StepwiseConfig {
  redis: {
    /** REDIS_URL as given (undefined: serve chooses, see cli/serve-redis.ts). */
    url: string | undefined;
    /** Seed nodes of a Redis Cluster, used instead of `url`. */
    cluster: string[] | undefined;
    localPort: number;
    connectTimeoutSeconds: number;
    /** PATH: where a private redis-server is looked for. */
    searchPath: string | undefined;
  };
  /** Runtime settings but the Redis address (which serve may still have to choose). */
  runtime: Omit<RuntimeSettings, "redisUrl" | "redisCluster">;
  deployment: { region: string; account: string; storage: "compact" | "json" };
  /** Where a Distributed Map reads items and writes results (runtime/map-runs/). */
  itemStore: { endpoint?: string; region: string };
  worker: {
    concurrency: number;
    taskConcurrency: number;
    fireConcurrency: number;
    metrics: { port: number; host: string } | undefined;
  };
  api: {
    port: number;
    host: string;
    /** Why the host was forced to loopback, when it was. */
    hostWarning: string | undefined;
    keys: ApiKey[];
    processes: number;
    /** Set in the processes `serve --api-processes` forks: their index. */
    processIndex: number | undefined;
    maxWaitSeconds: number;
    limits: ConnectionLimits;
    admission: AdmissionSettings;
    slowRequestMs: number;
    consoleDir: string | undefined;
  };
  tasks: {
    /** STEPWISE_TASKS: the module, loaded by the command (an import is async). */
    module: string | undefined;
    egress: EgressPolicy;
    httpMaxResponseBytes: number;
    modelEndpoints: ModelEndpoints;
    /**
     * Where the model runner finds the API keys its endpoints name by variable
     * (`apiKeyEnv`): the environment as read at start.
     */
    secrets: Environment;
    /**
     * AWS service integrations: the region when STEPWISE_AWS_REGION is set (else the
     * resource's, the SDK's chain, us-east-1) and STEPWISE_AWS_ENDPOINT_<SERVICE> by service key.
     */
    aws: { region?: string; endpoints: Record<string, string> };
    /** STEPWISE_EVENTS_LOCAL: `events:putEvents` to the default bus goes to Stepwise's own bus. */
    eventsLocal: boolean;
  };
  webhook: { url: string; secret: string } | undefined;
  audit: { keyFile: string | undefined };
  tracing: { otlp: boolean };
  log: { level: LogLevel };
  crash: { at: string; after: number } | undefined;
  /** The longest a drain may take after a signal before the process exits anyway. */
  shutdownSeconds: number;
  /** Started through `npx` (npm exec): stop when it is gone (cli/launcher.ts). */
  launchedByNpx: boolean;
}

/** Flags of `serve` and `worker` that stand for a variable (flag name → value). */
export type Flags = ReadonlyMap<string, string>;

const REGION = /^[a-z0-9-]{1,32}$/;
const ACCOUNT = /^\d{12}$/;

export function loadConfig(env: Environment, flags: Flags = new Map()): StepwiseConfig {
  const read = new Reader(env, flags);
  const payloads = payloadPolicy(read);
  const keys = read.parsed("STEPWISE_API_KEYS", (raw) =>
    parseApiKeys(raw, read.raw("STEPWISE_APPROVER_GROUPS")),
  );
  const address = listenAddress(keys, read.optionalString("HOST", "host"));
  const concurrency = read.integer(
    "STEPWISE_CONCURRENCY",
    WORKER_DEFAULTS.concurrency,
    { min: 1, max: 10_000 },
    "concurrency",
  );
  const webhookUrl = read.optionalString("STEPWISE_APPROVAL_WEBHOOK");
  const metricsPort = read.optionalInteger(
    "STEPWISE_METRICS_PORT",
    { min: 0, max: 65_535 },
    "metrics-port",
  );
  const retentionDays = read.number("STEPWISE_RETENTION_DAYS", 90, 0);
  const maxHistory = read.integer("STEPWISE_MAX_HISTORY_EVENTS", 25_000, { min: 0 });
  const crashAt = read.optionalString("STEPWISE_CRASH_AT");
  const otlpOff = read.oneOf("OTEL_SDK_DISABLED", ["true", "false"], "false") === "true";
  const cluster = read.optionalString("STEPWISE_REDIS_CLUSTER");
  const shards = read.parsed("STEPWISE_SHARDS", shardsFromEnv);
  const workerShards = read.parsed("STEPWISE_WORKER_SHARDS", workerShardsFromEnv);
  return {
    redis: {
      url: read.optionalString("REDIS_URL"),
      cluster: cluster
        ?.split(",")
        .map((node) => node.trim())
        .filter((node) => node !== ""),
      localPort: read.integer("STEPWISE_LOCAL_REDIS_PORT", 6379, { min: 1, max: 65_535 }),
      connectTimeoutSeconds: read.integer("STEPWISE_CONNECT_TIMEOUT", 30, { min: 1, max: 3600 }),
      searchPath: read.raw("PATH"),
    },
    runtime: {
      prefix: read.matching(
        "STEPWISE_PREFIX",
        "stepwise",
        // The store's own rule (runtime/store/keys.ts makeKeys): key names are built
        // from it and a BullMQ queue name may not hold ':'.
        /^[A-Za-z0-9_.-]{1,100}$/,
        "1–100 letters, digits, '_', '.' or '-'",
      ),
      ...(shards !== undefined ? { shards } : {}),
      ...(workerShards !== undefined ? { workerShards } : {}),
      leaseMs: read.integer("STEPWISE_LEASE_MS", 10_000, { min: 1 }),
      lockDurationMs: read.integer("STEPWISE_LOCK_MS", 3_000, { min: 1 }),
      stalledIntervalMs: read.integer("STEPWISE_STALLED_MS", 1_000, { min: 1 }),
      tombstoneTtlSeconds: 7 * 24 * 3600,
      timerPollMs: read.integer("STEPWISE_TIMER_POLL_MS", 20, { min: 1 }),
      chain: {
        transitions: read.integer("STEPWISE_CHAIN_TRANSITIONS", 100, { min: 1 }),
        ms: read.number("STEPWISE_CHAIN_MS", 10, 0),
      },
      retentionSeconds: Math.round(retentionDays * 86_400),
      eventRetentionSeconds: Math.round(
        read.number("STEPWISE_EVENT_RETENTION_HOURS", 24, 0.01) * 3600,
      ),
      approvalEvents: webhookUrl !== undefined,
      maxHistoryEvents: maxHistory === 0 ? Infinity : maxHistory,
      ...(payloads ? { payloads } : {}),
      // The API's runtime fails fast (serve sets it); workers wait for Redis.
      failFast: false,
      otlp:
        !otlpOff &&
        (read.raw("OTEL_EXPORTER_OTLP_ENDPOINT") ??
          read.raw("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) !== undefined,
      // Read now: a missing or wrong key would otherwise fail the first commit that signs.
      ...optional(
        "auditKeyFile",
        read.parsed("STEPWISE_AUDIT_KEY", (raw) => {
          if (raw !== undefined) readSigningKey(raw);
          return raw;
        }),
      ),
    },
    deployment: {
      region: read.matching(
        "STEPWISE_AWS_REGION",
        "us-east-1",
        REGION,
        "a region name of lower-case letters, digits and '-' (like eu-west-1)",
      ),
      account: read.matching("STEPWISE_AWS_ACCOUNT", "123456789012", ACCOUNT, "12 digits"),
      storage: read.oneOf("STEPWISE_STORAGE", ["compact", "json"], "compact"),
    },
    itemStore: {
      region: read.matching(
        "STEPWISE_AWS_REGION",
        "us-east-1",
        REGION,
        "a region name of lower-case letters, digits and '-' (like eu-west-1)",
      ),
      ...optional("endpoint", read.parsed("STEPWISE_S3_ENDPOINT", s3Endpoint)),
    },
    worker: {
      concurrency,
      taskConcurrency: read.integer(
        "STEPWISE_TASK_CONCURRENCY",
        WORKER_DEFAULTS.taskConcurrency,
        { min: 1, max: 100_000 },
        "task-concurrency",
      ),
      fireConcurrency: read.integer(
        "STEPWISE_FIRE_CONCURRENCY",
        Math.max(concurrency, WORKER_DEFAULTS.minFireConcurrency),
        { min: 1, max: 100_000 },
        "fire-concurrency",
      ),
      metrics:
        metricsPort === undefined
          ? undefined
          : {
              port: metricsPort,
              host: read.string("STEPWISE_METRICS_HOST", "127.0.0.1", "metrics-host"),
            },
    },
    api: {
      port: read.integer("PORT", 8080, { min: 0, max: 65_535 }, "port"),
      host: address.host,
      hostWarning: address.warning,
      keys,
      processes: read.integer("STEPWISE_API_PROCESSES", 1, { min: 1, max: 64 }, "api-processes"),
      processIndex: read.optionalInteger("STEPWISE_API_PROCESS", { min: 0, max: 63 }),
      maxWaitSeconds: read.integer("STEPWISE_MAX_WAIT", 300, { min: 0, max: 3600 }),
      limits: connectionLimits(read),
      admission: admission(read),
      slowRequestMs: read.integer("STEPWISE_SLOW_REQUEST_MS", 1000, { min: 0 }),
      consoleDir: read.optionalString("STEPWISE_CONSOLE_DIR"),
    },
    tasks: {
      module: read.optionalString("STEPWISE_TASKS"),
      egress: read.parsed("STEPWISE_EGRESS_ALLOW", parseEgressAllow),
      httpMaxResponseBytes: read.integer(
        "STEPWISE_HTTP_MAX_RESPONSE_BYTES",
        payloads?.resolveMaxBytes ?? MAX_RESPONSE_BYTES,
        { min: 1 },
      ),
      modelEndpoints: read.parsed("STEPWISE_MODEL_ENDPOINTS", modelEndpoints),
      secrets: env,
      aws: awsSettings(read),
      eventsLocal: read.oneOf("STEPWISE_EVENTS_LOCAL", ["true", "false"], "false") === "true",
    },
    webhook: webhookUrl !== undefined ? webhook(read, webhookUrl) : undefined,
    audit: { keyFile: read.optionalString("STEPWISE_AUDIT_KEY") },
    tracing: {
      otlp:
        !otlpOff &&
        (read.raw("OTEL_EXPORTER_OTLP_ENDPOINT") ??
          read.raw("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT")) !== undefined,
    },
    log: { level: logLevel(read) },
    launchedByNpx: read.raw("npm_command") === "exec",
    shutdownSeconds: read.integer("STEPWISE_SHUTDOWN_SECONDS", 10, { min: 1, max: 3600 }),
    crash:
      crashAt !== undefined
        ? {
            at: read.matching(
              "STEPWISE_CRASH_AT",
              "",
              /^((beforeCommit|afterCommit|duringTask)(:child|:collect)?|afterTickStarted)$/,
              "beforeCommit, afterCommit or duringTask, optionally with :child or :collect, or afterTickStarted",
            ),
            after: read.integer("STEPWISE_CRASH_AFTER", 1, { min: 1 }),
          }
        : undefined,
  };
}

function optional<K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [k in K]?: V };
}

function connectionLimits(read: Reader): ConnectionLimits {
  const d = DEFAULT_CONNECTION_LIMITS;
  return {
    requestTimeoutMs: read.integer("STEPWISE_REQUEST_TIMEOUT_MS", d.requestTimeoutMs, { min: 0 }),
    headersTimeoutMs: read.integer("STEPWISE_HEADERS_TIMEOUT_MS", d.headersTimeoutMs, { min: 0 }),
    keepAliveTimeoutMs: read.integer("STEPWISE_KEEP_ALIVE_TIMEOUT_MS", d.keepAliveTimeoutMs, {
      min: 1,
    }),
    maxConnections: read.integer("STEPWISE_MAX_CONNECTIONS", d.maxConnections, { min: 0 }),
    maxRequestsPerSocket: read.integer("STEPWISE_MAX_REQUESTS_PER_SOCKET", d.maxRequestsPerSocket, {
      min: 0,
    }),
  };
}

function admission(read: Reader): AdmissionSettings {
  const rate = read.number("STEPWISE_START_RATE", DEFAULT_ADMISSION.rate, 0);
  return {
    rate,
    // A bucket must hold at least one start, or a rate above 0 would admit none.
    burst: read.number("STEPWISE_START_BURST", DEFAULT_ADMISSION.burst, rate > 0 ? 1 : 0),
    maxBacklog: read.integer("STEPWISE_MAX_BACKLOG", DEFAULT_ADMISSION.maxBacklog, { min: 0 }),
  };
}

function logLevel(read: Reader): LogLevel {
  const own = read.raw("STEPWISE_LOG_LEVEL");
  const name = own !== undefined ? "STEPWISE_LOG_LEVEL" : "LOG_LEVEL";
  return read.oneOf(name, LOG_LEVELS, "info");
}

function payloadPolicy(read: Reader): PayloadPolicy | undefined {
  const store = read.oneOf("STEPWISE_PAYLOAD_STORE", ["redis", "off"], "off");
  if (store === "off") return undefined;
  return {
    refOverBytes: read.integer("STEPWISE_PAYLOAD_REF_BYTES", 256 * 1024, { min: 1 }),
    resolveMaxBytes: read.integer("STEPWISE_PAYLOAD_RESOLVE_MAX_BYTES", 10 * 1024 * 1024, {
      min: 1,
    }),
  };
}

function modelEndpoints(path: string | undefined): ModelEndpoints {
  if (path === undefined) return {};
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`STEPWISE_MODEL_ENDPOINTS: cannot read ${path}: ${(err as Error).message}`);
  }
  return parseEndpoints(text, `STEPWISE_MODEL_ENDPOINTS (${path})`);
}

/**
 * The AWS runner's settings. STEPWISE_AWS_REGION is validated with the deployment's
 * identity above; only a value set counts here. The endpoint overrides are one
 * variable per service (the catalogue's "STEPWISE_AWS_ENDPOINT_<SERVICE>"): each
 * set one must be an http(s) URL, or the process stops naming it.
 */
function awsSettings(read: Reader): { region?: string; endpoints: Record<string, string> } {
  variable("STEPWISE_AWS_ENDPOINT_<SERVICE>");
  let endpoints: Record<string, string>;
  try {
    endpoints = parseAwsEndpoints(read.env);
  } catch (err) {
    if (err instanceof AwsEndpointError) throw new ConfigError(err.variable, err.message);
    throw err;
  }
  return { ...optional("region", read.raw("STEPWISE_AWS_REGION")), endpoints };
}

/** A webhook without a secret is refused: an unsigned notification could be forged. */
function webhook(read: Reader, url: string): { url: string; secret: string } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new ConfigError(
      "STEPWISE_APPROVAL_WEBHOOK",
      `STEPWISE_APPROVAL_WEBHOOK='${url}': expected an http(s) URL`,
    );
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new ConfigError(
      "STEPWISE_APPROVAL_WEBHOOK",
      `STEPWISE_APPROVAL_WEBHOOK='${url}': expected an http(s) URL`,
    );
  }
  const secret = read.raw("STEPWISE_WEBHOOK_SECRET");
  if (secret === undefined || secret.length < 16) {
    throw new ConfigError(
      "STEPWISE_WEBHOOK_SECRET",
      "STEPWISE_APPROVAL_WEBHOOK needs STEPWISE_WEBHOOK_SECRET (16+ characters) to sign its requests",
    );
  }
  return { url, secret };
}

/** The client commands' settings (`machines`, `executions`, `approvals`). */
export interface ClientConfig {
  url: string;
  apiKey: string | undefined;
  color: boolean;
}

export function loadClientConfig(env: Environment, flags: Flags = new Map()): ClientConfig {
  const read = new Reader(env, flags);
  return {
    url: read.string("STEPWISE_URL", "http://127.0.0.1:8080", "url"),
    apiKey: read.optionalString("STEPWISE_API_KEY", "api-key"),
    // NO_COLOR: any value but the empty string turns colour off (no-color.org).
    color: read.raw("NO_COLOR") === undefined,
  };
}

/** STEPWISE_S3_ENDPOINT: empty or unset for AWS S3 itself, else an http(s) URL. */
function s3Endpoint(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(`STEPWISE_S3_ENDPOINT='${raw}': expected an http(s) URL`);
  }
  if (url.protocol !== "https:" && url.protocol !== "http:") {
    throw new Error(`STEPWISE_S3_ENDPOINT='${raw}': expected an http(s) URL`);
  }
  return raw;
}
