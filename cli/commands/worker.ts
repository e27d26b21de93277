import { createRegistry } from "../../api/metrics.js";
import { runtimeSettings, workerOptions } from "../../config/service.js";
import { startApprovalWebhookRelay } from "../../runtime/approvals/approval-webhooks.js";
import { failureFields, logFailedExecutions } from "../../runtime/worker/failure-log.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { clusterSeedUrl } from "../serve-redis.js";
import { setConnectionLog } from "../../runtime/store/connection-errors.js";
import { startWorker } from "../../runtime/worker/worker.js";
import { offloadHeavySteps } from "../offload.js";
import { registerOffloadMetrics } from "../../runtime/offload/index.js";
import { workerMetrics } from "../../runtime/worker/worker-metrics.js";
import { functionRunner } from "../../task-runners/function.js";
import type { TaskRunner } from "../../task-runners/runner.js";
import { parseArgs } from "../args.js";
import { serviceConfig } from "../service-config.js";
import { EXIT, UsageError, type Command } from "../command.js";
import { containStrayErrors } from "../containment.js";
import { createLogger } from "../logger.js";
import { serveMetrics, type MetricsServer } from "../metrics-server.js";
import { redactRedisUrl, waitForRedis } from "../redis-connection.js";
import { stepwiseVersion } from "../version.js";
import { loadTasksModule } from "../tasks-module.js";
import { drainMs, exitAfter, whenLauncherGone } from "../launcher.js";

const usage = `Usage: stepwise worker [--concurrency N] [--task-concurrency N] [--fire-concurrency N]
                       [--metrics-port N] [--metrics-host H]

Runs a durable worker: advances executions stored in Redis one transition per
BullMQ job, fires timers, and calls task resources. Run as many as you like, on
as many machines as you like, against one Redis. SIGTERM/SIGINT finish the jobs
in flight (or hand them back after 10 s) and exit.

Every setting is an environment variable; an option overrides its variable.
\`stepwise config\` prints them all with the values in force; README.md ("Running
the service") documents each.

Options:
  --concurrency N       transitions processed at once on each shard served
                        (STEPWISE_CONCURRENCY, default 16; 16 shards: up to 256)
  --task-concurrency N  task calls in flight at once that this worker's commits hand
                        it, over every shard (STEPWISE_TASK_CONCURRENCY, default 64);
                        task jobs from the queue (retries, overflow) run besides
  --fire-concurrency N  runs advanced in-process at once on each shard: timers claimed,
                        runs its commits woke (STEPWISE_FIRE_CONCURRENCY, default the
                        concurrency, at least 64)
  --metrics-port N      serve this worker's Prometheus metrics at http://<host>:N/metrics
                        (STEPWISE_METRICS_PORT; default: none)
  --metrics-host H      the interface to serve them on (STEPWISE_METRICS_HOST; default
                        127.0.0.1: the endpoint has no authentication)

Logs are JSON lines (pino), as the API's: a ready line (version, Redis, concurrency)
and one line for every execution that ends FAILED, TIMED_OUT or ABORTED, naming
its error. Their level: STEPWISE_LOG_LEVEL (info).`;

async function loadRunners(path: string | undefined): Promise<TaskRunner[]> {
  if (!path) return [];
  return [functionRunner(await loadTasksModule(path, "STEPWISE_TASKS"))];
}

export const workerCommand: Command = {
  name: "worker",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      values: [
        "concurrency",
        "task-concurrency",
        "fire-concurrency",
        "metrics-port",
        "metrics-host",
      ],
    });
    if (args.positionals.length > 0) throw new UsageError("worker takes no positional arguments");
    const config = serviceConfig(args.values);
    const { concurrency, taskConcurrency, fireConcurrency } = config.worker;
    const connectTimeout = config.redis.connectTimeoutSeconds;
    let taskRunners: TaskRunner[];
    try {
      taskRunners = await loadRunners(config.tasks.module);
    } catch (err) {
      throw new UsageError((err as Error).message, false);
    }
    const log = createLogger(config.log.level);
    setConnectionLog((lvl, message, fields) => log[lvl](fields, message));
    const redisUrl =
      config.redis.url ?? clusterSeedUrl(config.redis.cluster) ?? "redis://127.0.0.1:6379";
    const settings = runtimeSettings(config, redisUrl);
    // A heavy step runs on the evaluation thread, so it cannot hold lock renewals,
    // heartbeats or /metrics (runtime/offload/).
    const offload = offloadHeavySteps();
    const prefix = settings.prefix;
    const shownUrl = redactRedisUrl(redisUrl);
    const metricsPort = config.worker.metrics?.port;
    const metricsHost = config.worker.metrics?.host ?? "127.0.0.1";

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
    if (registry) registerOffloadMetrics(registry, offload);
    const worker = await startWorker({
      ...settings,
      ...workerOptions(config),
      taskRunners,
      // Its lines (failed task attempts, errors, executions given up) carry executionId,
      // stateName, attempt and traceId where they concern one (runtime/tracing/logger.ts).
      logger: log,
      ...(registry ? workerMetrics(registry) : {}),
    });
    // Reading records needs the runtime's stores; its connections are idle otherwise.
    const runtime = createRedisRuntime(settings);
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
    const webhooks = config.webhook
      ? await startApprovalWebhookRelay({
          ...runtime.settings,
          ...config.webhook,
          egress: config.tasks.egress,
          onError: (err) => log.warn({ err }, `approval webhook: ${errorText(err)}`),
        })
      : undefined;
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
        fireConcurrency,
        ...(metrics ? { metricsPort: metrics.port, metricsHost: metrics.host } : {}),
      },
      `stepwise ${version} worker ready: Redis ${shownUrl}, prefix ${prefix}, concurrency ${concurrency}` +
        `${metrics ? `, metrics on port ${metrics.port} of ${metrics.host}` : ""}`,
    );
    await new Promise<void>((done) => {
      let stopping = false;
      const stop = (signal: string): void => {
        if (stopping) return;
        stopping = true;
        log.info({ signal }, `${signal}: finishing jobs in flight`);
        exitAfter(config.shutdownSeconds, (message) => log.error({ signal }, message));
        void Promise.all([
          worker.close(drainMs(config.shutdownSeconds)),
          metrics?.close(),
          failures.close(),
          webhooks?.close(),
        ])
          .then(() => runtime.close())
          .then(() => offload.close())
          .then(() => done());
      };
      process.once("SIGTERM", () => stop("SIGTERM"));
      if (config.launchedByNpx) whenLauncherGone(() => stop("npx exited"));
      process.once("SIGINT", () => stop("SIGINT"));
    });
    return EXIT.ok;
  },
};

function errorText(err: unknown): string {
  return err instanceof Error ? err.message.split("\n")[0]! : String(err);
}
