/**
 * Every environment variable Stepwise reads, in one table: its default as the
 * README states it, what it does, and whether its value is a secret (masked by
 * `stepwise config`). `load.ts` reads exactly these; the README's table of
 * variables is rendered from this one (`npx tsx scripts/config-table.ts`) and a
 * test holds the two equal, so a variable cannot be read without being documented
 * or documented without being read.
 */
export interface Variable {
  name: string;
  /** The default as a person reads it (`none` when unset means off). */
  default: string;
  /** What it does; Markdown, one paragraph. */
  doc: string;
  /** Masked when printed. */
  secret?: boolean;
}

export const VARIABLES: readonly Variable[] = [
  // Where things are
  {
    name: "REDIS_URL",
    default:
      "`redis://127.0.0.1:6379` (`serve`: that one when it answers, else a private `redis-server`)",
    doc: "the Redis everything is kept in; unset, `serve` uses the one at `127.0.0.1:STEPWISE_LOCAL_REDIS_PORT` or starts its own (see Quick start)",
    secret: true,
  },
  {
    name: "STEPWISE_REDIS_CLUSTER",
    default: "none",
    doc: "`host:port,…` seed nodes of a Redis Cluster, used instead of `REDIS_URL`",
  },
  {
    name: "STEPWISE_LOCAL_REDIS_PORT",
    default: "`6379`",
    doc: "`serve` without `REDIS_URL`: the port of the local Redis it uses, or starts when none answers",
  },
  {
    name: "PATH",
    default: "the shell's",
    doc: "where `serve` looks for `redis-server` when it starts its own",
  },
  {
    name: "STEPWISE_CONNECT_TIMEOUT",
    default: "`30`",
    doc: "`serve`, `worker`: seconds to keep trying an unanswering Redis at start-up before exiting 1 (`/health` answers 503 meanwhile)",
  },
  {
    name: "STEPWISE_SHUTDOWN_SECONDS",
    default: "`10`",
    doc: "`serve`, `worker`: after SIGTERM or SIGINT, the longest a drain may take; past it the process exits 1 whatever Redis does, and the jobs it held are taken again by other workers when their locks expire",
  },
  {
    name: "STEPWISE_PREFIX",
    default: "`stepwise`",
    doc: "Redis key prefix: 1–100 letters, digits, `_`, `.` or `-` (keys are hash-tagged for Redis Cluster)",
  },
  {
    name: "STEPWISE_SHARDS",
    default: "`16` (or the deployment's)",
    doc: "the number of shards a new deployment spreads its executions over (see [Scaling past one Redis](#scaling-past-one-redis)); fixed once stored: a process started with another count refuses to start",
  },
  {
    name: "STEPWISE_WORKER_SHARDS",
    default: "all",
    doc: "`worker`, `serve`: the shards this process works on, like `0-7` or `0-3,12`",
  },
  // The API
  {
    name: "PORT",
    default: "`8080`",
    doc: "`serve`: the port the API listens on (as `--port`; `0` picks a free one, named in the log)",
  },
  {
    name: "HOST",
    default: "`0.0.0.0` with API keys, `127.0.0.1` without",
    doc: "`serve`: the interface the API binds (as `--host`); without API keys it is forced to `127.0.0.1`",
  },
  {
    name: "STEPWISE_API_PROCESSES",
    default: "`1`",
    doc: "`serve` (or `--api-processes N`): answer the API from N processes sharing the port; the first also runs the worker unless `--no-worker`; one that dies is replaced. Each has its own metrics, start rate limits and `?wait=` subscribers; request ids name their process (`p1-req-7`)",
  },
  {
    name: "STEPWISE_API_PROCESS",
    default: "none",
    doc: "set by `serve --api-processes` in the processes it forks (their index); not for users",
  },
  {
    name: "STEPWISE_API_KEYS",
    default: "none: authentication off, API on `127.0.0.1` only",
    doc: "`name:scope:secret,…` with scope `admin`, `run`, `callback` or `approve`; secrets of 16+ characters",
    secret: true,
  },
  {
    name: "STEPWISE_APPROVER_GROUPS",
    default: "none",
    doc: "approver groups of `approve` keys: `alice=finance\\|legal;bob=finance`; every name must be a key of `STEPWISE_API_KEYS`",
  },
  {
    name: "STEPWISE_MAX_WAIT",
    default: "`300`",
    doc: "`serve`: longest `?wait=` of a start, in seconds",
  },
  {
    name: "STEPWISE_REQUEST_TIMEOUT_MS",
    default: "`30000`",
    doc: "a request's headers and body must arrive within this, else `408 RequestTimeout`; it times receiving only (`?wait=` starts, long polls and SSE answer as long as they need)",
  },
  {
    name: "STEPWISE_HEADERS_TIMEOUT_MS",
    default: "`10000`",
    doc: "a request's headers must arrive within this",
  },
  {
    name: "STEPWISE_KEEP_ALIVE_TIMEOUT_MS",
    default: "`72000`",
    doc: "an idle keep-alive connection is closed after this (above the 60 s of common load balancers)",
  },
  {
    name: "STEPWISE_MAX_CONNECTIONS",
    default: "`10000`",
    doc: "connections open at once (more are closed as they arrive); `0`: no limit",
  },
  {
    name: "STEPWISE_MAX_REQUESTS_PER_SOCKET",
    default: "`0` (no limit)",
    doc: "requests served on one connection",
  },
  {
    name: "STEPWISE_START_RATE",
    default: "`300`",
    doc: "`serve`: starts per second refilled in the token bucket of each API key and of each state machine (AWS's StartExecution quota); past it `429 ThrottlingException` with `Retry-After`; per API process; `0` turns it off",
  },
  {
    name: "STEPWISE_START_BURST",
    default: "`1300`",
    doc: "`serve`: the size of those buckets, the burst a quiet key may start at once",
  },
  {
    name: "STEPWISE_MAX_BACKLOG",
    default: "`100000`",
    doc: "`serve`: transitions waiting for a worker above which starts are refused with 429; `0` turns the check off",
  },
  {
    name: "STEPWISE_SLOW_REQUEST_MS",
    default: "`1000`",
    doc: "`serve`: a request that takes this long is logged at `info`; faster ones that succeed are logged at `debug`",
  },
  {
    name: "STEPWISE_CONSOLE_DIR",
    default: "the console built at install (`console/dist`)",
    doc: "`serve`: the built web console to serve at `/console/`",
  },
  {
    name: "STEPWISE_AWS_REGION",
    default: "`us-east-1`",
    doc: "the region in the ARNs both APIs issue (`arn:aws:states:<region>:<account>:…`): lower-case letters, digits and `-`. AWS service integrations (see [Calling AWS services](#calling-aws-services)) call the resource's own region (`arn:aws:states:<region>::…`), else this one when set, else the AWS SDK's (`AWS_REGION`, the profile), else `us-east-1`",
  },
  {
    name: "STEPWISE_AWS_ACCOUNT",
    default: "`123456789012`",
    doc: "the account in those ARNs: 12 digits",
  },
  {
    name: "STEPWISE_AWS_ENDPOINT_<SERVICE>",
    default: "none: AWS's endpoint of the region",
    doc: "workers: the endpoint AWS service integrations call for one service instead of AWS's (LocalStack, dynalite, MinIO, ElasticMQ), an http(s) URL; `<SERVICE>` is the service in capitals: `LAMBDA`, `DYNAMODB`, `SQS`, `SNS`, `EVENTBRIDGE`, `S3` (path-style), or any `aws-sdk:<service>`. Under `STEPWISE_EGRESS_ALLOW` when it is a loopback or private address. Credentials: the standard AWS chain (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_PROFILE`, container and instance roles)",
  },
  {
    name: "STEPWISE_EVENTS_LOCAL",
    default: "`false`",
    doc: "workers: `true` publishes a definition's `events:putEvents` entries for the default bus (no `EventBusName`, `default`, or `arn:aws:events:<region>:<account>:event-bus/default`) into Stepwise's own event bus, as `POST /v1/events` does (rules fire, `waitForEvent` tasks take them), instead of sending them to EventBridge; entries for other buses still go to EventBridge. Not for EXPRESS executions",
  },
  {
    name: "STEPWISE_S3_ENDPOINT",
    default: "AWS S3",
    doc: "workers: the S3-compatible store (MinIO, R2, …) where a Distributed Map's `ItemReader` reads and `ResultWriter` writes, path-style; empty: AWS S3 in `STEPWISE_AWS_REGION`. Credentials: the standard AWS chain (`AWS_ACCESS_KEY_ID`, …); not subject to `STEPWISE_EGRESS_ALLOW`",
  },
  // Workers
  {
    name: "STEPWISE_CONCURRENCY",
    default: "`16`",
    doc: "transitions a worker runs at once on each shard it serves (16 shards: up to 256 in one process), in `serve` and `worker` (`--concurrency`)",
  },
  {
    name: "STEPWISE_TASK_CONCURRENCY",
    default: "`64`",
    doc: "task calls in flight at once that a worker's own commits hand it, over every shard (`--task-concurrency`); task jobs from the queue (retries, overflow) run besides, as many per shard as `STEPWISE_CONCURRENCY`",
  },
  {
    name: "STEPWISE_FIRE_CONCURRENCY",
    default: "`STEPWISE_CONCURRENCY`, at least `64`",
    doc: "runs a worker advances in-process at once on each shard besides its jobs: the timers it claimed and the runs its own commits woke (`--fire-concurrency`); their commits go out batched, so more at once costs Redis less per transition",
  },
  {
    name: "STEPWISE_METRICS_PORT",
    default: "none",
    doc: "`worker`: serve its Prometheus metrics on this port (`--metrics-port`; `serve` has them at `/metrics`)",
  },
  {
    name: "STEPWISE_METRICS_HOST",
    default: "`127.0.0.1`",
    doc: "`worker`: the interface of that endpoint (`--metrics-host`); it has no authentication",
  },
  {
    name: "STEPWISE_TASKS",
    default: "none",
    doc: "a JS module serving Task resources, as `stepwise run --tasks`: each named function export `<name>` serves `function:<name>`; a default export object maps whole Resource strings to functions",
  },
  {
    name: "STEPWISE_MODEL_ENDPOINTS",
    default: "none",
    doc: "a JSON or YAML file of named model endpoints for `stepwise:model` (base URL, the variable holding the key, default model, prices; see [AI agents](#ai-agents)); read at start",
  },
  {
    name: "STEPWISE_EGRESS_ALLOW",
    default: "none",
    doc: "`cidr\\|ip\\|host,…` (`10.0.0.0/8,127.0.0.1,billing.internal`): what HTTP tasks, approval webhooks and AWS endpoint overrides may reach although it is loopback, private, link-local (cloud metadata), unspecified, multicast or reserved. Everything else of that kind is refused after DNS resolution and on every redirect, failing the task with `States.Http.Socket` (AWS integrations: `<Service>.SdkClientException`)",
  },
  {
    name: "STEPWISE_HTTP_MAX_RESPONSE_BYTES",
    default: "`262144`, or `STEPWISE_PAYLOAD_RESOLVE_MAX_BYTES` with `STEPWISE_PAYLOAD_STORE`",
    doc: "longest HTTP task response body read; past it the task fails with `States.DataLimitExceeded`",
  },
  {
    name: "STEPWISE_PAYLOAD_STORE",
    default: "off",
    doc: "`redis`: results, state outputs and task inputs over `STEPWISE_PAYLOAD_REF_BYTES` go by reference instead of failing (see [AI agents](#ai-agents)); unset, as on AWS",
  },
  {
    name: "STEPWISE_PAYLOAD_REF_BYTES",
    default: "`262144`",
    doc: "with `STEPWISE_PAYLOAD_STORE`: the size past which a value goes by reference",
  },
  {
    name: "STEPWISE_PAYLOAD_RESOLVE_MAX_BYTES",
    default: "`10485760`",
    doc: "with `STEPWISE_PAYLOAD_STORE`: the largest payload a read into a reference (or a task input) loads",
  },
  // Approvals and audit
  {
    name: "STEPWISE_APPROVAL_WEBHOOK",
    default: "none",
    doc: "`serve` (with its worker), `worker`: POST approval events (created, decided, expired, cancelled) to this http(s) URL, signed with `STEPWISE_WEBHOOK_SECRET` (`Stepwise-Signature`); under `STEPWISE_EGRESS_ALLOW`",
  },
  {
    name: "STEPWISE_WEBHOOK_SECRET",
    default: "none",
    doc: "the signing secret of those webhooks, 16+ characters; required with `STEPWISE_APPROVAL_WEBHOOK`",
    secret: true,
  },
  {
    name: "STEPWISE_AUDIT_KEY",
    default: "a key generated once and kept in Redis",
    doc: "a PEM file (Ed25519 PKCS#8 private key) that signs audit exports and the checkpoints of every history (see [Provable audit](#provable-audit)); every `serve` and `worker` needs the same one; read at start",
  },
  // The runtime
  {
    name: "STEPWISE_LEASE_MS",
    default: "`10000`",
    doc: "how long a run with pending events may go unseen before it is enqueued again",
  },
  {
    name: "STEPWISE_LOCK_MS",
    default: "`3000`",
    doc: "BullMQ job lock: a worker that dies holding a job gives it back after this",
  },
  {
    name: "STEPWISE_STALLED_MS",
    default: "`1000`",
    doc: "how often workers look for jobs whose lock expired",
  },
  {
    name: "STEPWISE_TIMER_POLL_MS",
    default: "`20`",
    doc: "how often a worker with work in the last 2 s looks for timers armed sooner than it knew (bounds timer lateness); a worker without work looks every 250 ms",
  },
  {
    name: "STEPWISE_CHAIN_TRANSITIONS",
    default: "`100`",
    doc: "how many of the same run's next transitions one job goes on with, each still its own atomic commit (`1`: one per job)",
  },
  {
    name: "STEPWISE_CHAIN_MS",
    default: "`10`",
    doc: "how long one job goes on with them",
  },
  {
    name: "STEPWISE_MAX_HISTORY_EVENTS",
    default: "`25000`",
    doc: "most history events of one execution (AWS's hard quota); past it the execution fails with `States.Runtime`; `0`: no cap",
  },
  {
    name: "STEPWISE_RETENTION_DAYS",
    default: "`90` (as AWS)",
    doc: "how long an ended execution stays readable (record, history, journal); `0` keeps it forever",
  },
  {
    name: "STEPWISE_EVENT_RETENTION_HOURS",
    default: "`24`",
    doc: "how long events put on the bus (`POST /v1/events`) are kept, listable, found by `waitForEvent`'s `LookbackSeconds`, and their entry `Id`s remembered for idempotent retries",
  },
  {
    name: "STEPWISE_STORAGE",
    default: "`compact`",
    doc: "`json` stores run states and history as plain JSON (readable in `redis-cli`, ~40% more memory) instead of the compact encoding",
  },
  // Logs and traces
  {
    name: "STEPWISE_LOG_LEVEL",
    default: "`info`",
    doc: "log level of `serve` and `worker` (`fatal`, `error`, `warn`, `info`, `debug`, `trace`, `silent`): JSON lines, one per ended FAILED, TIMED_OUT or ABORTED execution, per failed task attempt and per request that failed or was slow; every request at `debug`. `LOG_LEVEL` is read when this is unset",
  },
  {
    name: "LOG_LEVEL",
    default: "`info`",
    doc: "the same as `STEPWISE_LOG_LEVEL`, which wins when both are set",
  },
  {
    name: "OTEL_EXPORTER_OTLP_ENDPOINT",
    default: "none",
    doc: "workers (and the API, for the stops it commits) export spans there over OTLP/HTTP (see [Correlation](#correlation-traces-and-logs)); unset, the OpenTelemetry SDK is not loaded. The exporter reads its other standard variables itself (`OTEL_EXPORTER_OTLP_HEADERS`, `OTEL_SERVICE_NAME`, `OTEL_RESOURCE_ATTRIBUTES`, `OTEL_BSP_*`…)",
  },
  {
    name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    default: "none",
    doc: "the same, for traces only",
  },
  {
    name: "OTEL_SDK_DISABLED",
    default: "`false`",
    doc: "`true` exports nothing whatever the endpoints say",
  },
  // The client commands
  {
    name: "STEPWISE_URL",
    default: "`http://127.0.0.1:8080`",
    doc: "`machines`, `executions`, `approvals`: the service to talk to (`--url`)",
  },
  {
    name: "STEPWISE_API_KEY",
    default: "none",
    doc: "`machines`, `executions`, `approvals`: the API key's secret to send (`--api-key`)",
    secret: true,
  },
  {
    name: "NO_COLOR",
    default: "unset",
    doc: "set, and not empty: the client commands print no colour",
  },
  {
    name: "npm_command",
    default: "set by npm",
    doc: "`exec` under `npx`: `serve` and `worker` then stop when `npx` does (`kill` of an `npx stepwise serve &` reaches npx only, which does not pass the signal on)",
  },
  // Fault injection
  {
    name: "STEPWISE_CRASH_AT",
    default: "none",
    doc: "fault injection for tests of crash safety: the worker kills itself with SIGKILL at this point (`beforeCommit`, `afterCommit`, `duringTask`, with `:child` or `:collect`; `afterTickStarted`: a schedule tick started its execution, not yet recorded)",
  },
  {
    name: "STEPWISE_CRASH_AFTER",
    default: "`1`",
    doc: "with `STEPWISE_CRASH_AT`: the how-manyth time the point is reached",
  },
];

export function variable(name: string): Variable {
  const found = VARIABLES.find((v) => v.name === name);
  if (!found) throw new Error(`config: '${name}' is not in config/variables.ts`);
  return found;
}
