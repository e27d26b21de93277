import { createRegistry } from "../../api/metrics.js";
import { webhooksFromEnv } from "../../runtime/approval-webhook-settings.js";
import { failureFields, logFailedExecutions } from "../../runtime/failure-log.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { clusterSeedUrl } from "../serve-redis.js";
import { setConnectionLog } from "../../runtime/connection-errors.js";
import { startWorker } from "../../runtime/worker.js";
import { workerMetrics } from "../../runtime/worker-metrics.js";
import { functionRunner } from "../../task-runners/function.js";
import { checkRunnerSettings } from "../../task-runners/index.js";
import type { TaskRunner } from "../../task-runners/runner.js";
import { integerSetting, numberOption, parseArgs } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";
import { loadEndpoints } from "../../task-runners/model/endpoints.js";
import { containStrayErrors } from "../containment.js";
import { createLogger, LOG_LEVELS } from "../logger.js";
import { serveMetrics, type MetricsServer } from "../metrics-server.js";
import { redactRedisUrl, waitForRedis } from "../redis-connection.js";
import { stepwiseVersion } from "../version.js";
import { loadTasksModule } from "../tasks-module.js";

const usage = `Usage: stepwise worker [--concurrency N] [--task-concurrency N] [--metrics-port N] [--metrics-host H]

Runs a durable worker: advances executions stored in Redis one transition per
BullMQ job, fires timers, and calls task resources. Run as many as you like, on
as many machines as you like, against one Redis. SIGTERM/SIGINT finish the jobs
in flight (or hand them back after 10 s) and exit.

Options:
  --concurrency N       transitions processed at once on each shard served
                        (STEPWISE_CONCURRENCY, default 16; 16 shards: up to 256)
  --task-concurrency N  task calls in flight at once that this worker's commits hand
                        it, over every shard (default 64); task jobs from the queue
                        (retries, overflow) run besides, as many on each shard served
  --metrics-port N      serve this worker's Prometheus metrics at http://<host>:N/metrics
                        (STEPWISE_METRICS_PORT; default: none)
  --metrics-host H      the interface to serve them on (STEPWISE_METRICS_HOST; default
                        127.0.0.1: the endpoint has no authentication)

Logs are JSON lines (pino), as the API's: a ready line (version, Redis, concurrency)
and one line for every execution that ends FAILED, TIMED_OUT or ABORTED, naming
its error.

Environment:
  REDIS_URL              redis://host:port (default redis://127.0.0.1:6379); retried
                         for STEPWISE_CONNECT_TIMEOUT seconds (30) at start-up
  STEPWISE_CONCURRENCY   as --concurrency
  LOG_LEVEL              fatal, error, warn, info (default), debug, trace or silent
  STEPWISE_PREFIX        key prefix (default stepwise)
  STEPWISE_TASKS         a JS module: named function exports serve
                         \`function:<name>\`; a default export object maps
                         Resource strings to functions
  STEPWISE_METRICS_PORT  as --metrics-port
  STEPWISE_METRICS_HOST  as --metrics-host
  STEPWISE_EGRESS_ALLOW  cidr|ip|host,... that HTTP tasks and webhooks may reach
                         although loopback, private, link-local or reserved
  STEPWISE_HTTP_MAX_RESPONSE_BYTES  longest HTTP task response body read (262144)`;

async function loadRunners(path: string | undefined): Promise<TaskRunner[]> {
  if (!path) return [];
  return [functionRunner(await loadTasksModule(path, "STEPWISE_TASKS"))];
}

export const workerCommand: Command = {
  name: "worker",
  summary: "run a durable worker against Redis (REDIS_URL)",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      values: ["concurrency", "task-concurrency", "metrics-port", "metrics-host"],
    });
    if (args.positionals.length > 0) throw new UsageError("worker takes no positional arguments");
    const env = process.env;
    const concurrency =
      numberOption(args, "concurrency", 1) ??
      integerSetting("STEPWISE_CONCURRENCY", env.STEPWISE_CONCURRENCY, 16, 1, 10_000);
    const taskConcurrency = numberOption(args, "task-concurrency", 1) ?? 64;
    const connectTimeout = integerSetting(
      "STEPWISE_CONNECT_TIMEOUT",
      env.STEPWISE_CONNECT_TIMEOUT,
      30,
      1,
      3600,
    );
    const level = env.LOG_LEVEL ?? "info";
    if (!LOG_LEVELS.includes(level))
      throw new UsageError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
    try {
      checkRunnerSettings(env);
    } catch (err) {
      throw new UsageError((err as Error).message, false);
    }
    const rawPort = args.values.get("metrics-port") ?? env.STEPWISE_METRICS_PORT;
    // Port 0 picks a free port (printed when ready).
    const metricsPort =
      rawPort === undefined || rawPort === ""
        ? undefined
        : integerSetting("--metrics-port/STEPWISE_METRICS_PORT", rawPort, 0, 0, 65535);
    const metricsHost = args.values.get("metrics-host") ?? env.STEPWISE_METRICS_HOST ?? "127.0.0.1";
    try {
      // Its model runner reads it at start: a bad file is a configuration error, not a crash.
      loadEndpoints(env);
    } catch (err) {
      io.stderr(`stepwise worker: ${(err as Error).message}\n`);
      return EXIT.usage;
    }
    const taskRunners = await loadRunners(env.STEPWISE_TASKS);
    const log = createLogger(level);
    setConnectionLog((lvl, message, fields) => log[lvl](fields, message));
    const redisUrl = env.REDIS_URL || clusterSeedUrl(env) || "redis://127.0.0.1:6379";
    const prefix = env.STEPWISE_PREFIX ?? "stepwise";
    const shownUrl = redactRedisUrl(redisUrl);

    let lastReason = "";
    const answered = await waitForRedis(redisUrl, {
      timeoutMs: connectTimeout * 1000,
      onAttempt: ({ attempt, reason, nextInMs }) => {
        lastReason = reason;
        if (nextInMs === undefined) return;
        log.warn(
          { redis: shownUrl, attempt, reason },
          `Redis at ${shownUrl} does not answer (${reason}); attempt ${attempt}, next in ${(nextInMs / 1000).toFixed(1)} s, giving up after ${connectTimeout} s (STEPWISE_CONNECT_TIMEOUT)`,
        );
      },
    });
    if (!answered) {
      log.error(
        { redis: shownUrl, reason: lastReason },
        `giving up: Redis at ${shownUrl} did not answer within ${connectTimeout} s (${lastReason}). Is Redis running? Check REDIS_URL`,
      );
      return EXIT.failed;
    }

    // A worker's transition counts live in its own process: without a port, nobody sees them.
    const registry = metricsPort !== undefined ? createRegistry() : undefined;
    const worker = await startWorker({
      redisUrl,
      prefix,
      concurrency,
      taskConcurrency,
      taskRunners,
      // Its lines (failed task attempts, errors, executions given up) carry executionId,
      // stateName, attempt and traceId where they concern one (runtime/tracing/logger.ts).
      logger: log,
      ...(registry ? workerMetrics(registry) : {}),
    });
    // Reading records needs the runtime's stores; its connections are idle otherwise.
    const runtime = createRedisRuntime({ redisUrl, prefix });
    const failures = await logFailedExecutions({
      redis: runtime.settings,
      layout: await runtime.shardLayout(),
      describe: (id) => runtime.describeExecution(id),
      log: (record) =>
        log.warn(
          failureFields(record),
          `execution ${record.executionId} ${record.status}: ${record.error ?? "no error name"}${record.cause ? ` (${record.cause.slice(0, 200)})` : ""}`,
        ),
    });
    containStrayErrors((kind, err) =>
      log.error({ err, kind }, `${kind} contained: ${errorText(err)}`),
    );
    let webhooks: Awaited<ReturnType<typeof webhooksFromEnv>>;
    try {
      webhooks = await webhooksFromEnv(env, {
        ...runtime.settings,
        onError: (err) => log.warn({ err }, `approval webhook: ${errorText(err)}`),
      });
    } catch (err) {
      log.error({ err }, (err as Error).message);
      await Promise.all([worker.close(), failures.close(), runtime.close()]);
      return EXIT.usage;
    }
    let metrics: MetricsServer | undefined;
    if (registry && metricsPort !== undefined) {
      try {
        metrics = await serveMetrics(registry, metricsPort, metricsHost);
      } catch (err) {
        io.stderr(
          `stepwise worker: cannot serve metrics on port ${metricsPort}: ${(err as Error).message}\n`,
        );
        await Promise.all([worker.close(), failures.close(), webhooks?.close(), runtime.close()]);
        return EXIT.failed;
      }
    }
    const version = stepwiseVersion();
    log.info(
      {
        version,
        redis: shownUrl,
        prefix,
        concurrency,
        taskConcurrency,
        ...(metrics ? { metricsPort: metrics.port, metricsHost: metrics.host } : {}),
      },
      `stepwise ${version} worker ready: Redis ${shownUrl}, prefix ${prefix}, concurrency ${concurrency}` +
        `${metrics ? `, metrics on port ${metrics.port} of ${metrics.host}` : ""}`,
    );
    await new Promise<void>((done) => {
      const stop = (signal: string): void => {
        log.info({ signal }, `${signal}: finishing jobs in flight`);
        void Promise.all([worker.close(), metrics?.close(), failures.close(), webhooks?.close()])
          .then(() => runtime.close())
          .then(() => done());
      };
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
    });
    return EXIT.ok;
  },
};

function errorText(err: unknown): string {
  return err instanceof Error ? err.message.split("\n")[0]! : String(err);
}
