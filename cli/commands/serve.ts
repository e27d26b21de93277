import { Redis } from "ioredis";
import { createRegistry } from "../../api/metrics.js";
import { buildServer } from "../../api/server.js";
import { offloadHeavySteps } from "../offload.js";
import { registerOffloadMetrics } from "../../runtime/offload/index.js";
import { Admission } from "../../api/admission.js";
import { runnerOptions, runtimeSettings, workerOptions } from "../../config/service.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { setConnectionLog } from "../../runtime/store/connection-errors.js";
import {
  failureFields,
  logFailedExecutions,
  type FailureLog,
} from "../../runtime/worker/failure-log.js";
import { startWorker, type StepwiseWorker } from "../../runtime/worker/worker.js";
import { workerMetrics } from "../../runtime/worker/worker-metrics.js";
import {
  startApprovalWebhookRelay,
  type ApprovalWebhookRelay,
} from "../../runtime/approvals/approval-webhooks.js";
import { defaultRunners, functionRunner, servedBy } from "../../task-runners/index.js";
import type { TaskRunner } from "../../task-runners/runner.js";
import { parseArgs } from "../args.js";
import { serviceConfig } from "../service-config.js";
import { EXIT, UsageError, type Command } from "../command.js";
import { containStrayErrors } from "../containment.js";
import { redactRedisUrl, waitForRedis } from "../redis-connection.js";
import { createLogger } from "../logger.js";
import { chooseRedis, clusterSeedUrl, type RedisChoice } from "../serve-redis.js";
import { apiProcessIndex, reportReady, superviseApiProcesses } from "../api-processes.js";
import { loadTasksModule } from "../tasks-module.js";
import { drainMs, exitAfter, whenLauncherGone } from "../launcher.js";
import { stepwiseVersion } from "../version.js";

const usage = `Usage: stepwise serve [--port N] [--host H] [--no-worker] [--api-processes N]
                      [--concurrency N] [--task-concurrency N] [--fire-concurrency N]

Runs the REST API (and, unless --no-worker, a worker that advances executions) in
one process. Every setting is an environment variable; an option overrides its
variable. \`stepwise config\` prints them all with the values in force; README.md
("Running the service") documents each. Stop it with Ctrl-C or SIGTERM: it drains
requests and jobs, and stops the private redis-server it started, if any.

Options:
  --port N              the port to listen on (PORT, default 8080; 0: any free port)
  --host H              the interface to bind (HOST, default 0.0.0.0; 127.0.0.1 without API keys)
  --no-worker           serve the API only; run workers with \`stepwise worker\`
  --api-processes N     answer the API from N processes sharing the port
                        (STEPWISE_API_PROCESSES, default 1); the worker runs in the first
  --concurrency N       the worker's transitions at once per shard (STEPWISE_CONCURRENCY, 16)
  --task-concurrency N  its task calls in flight (STEPWISE_TASK_CONCURRENCY, 64)
  --fire-concurrency N  its in-process advances at once per shard
                        (STEPWISE_FIRE_CONCURRENCY, default the concurrency, at least 64)

Environment (the main ones):
  REDIS_URL             Redis to use. Unset: redis://127.0.0.1:6379 when something
                        answers there, else a private redis-server started by serve
                        (AOF in ./.stepwise/redis/, stopped with the service)
  STEPWISE_API_KEYS     name:scope:secret,... (scopes: admin, run, callback, approve); without
                        keys authentication is off and the API binds to 127.0.0.1 only
  STEPWISE_APPROVER_GROUPS  approve keys' groups: alice=finance|legal;bob=finance
  STEPWISE_TASKS        a JS module: named function exports serve function:<name>
  STEPWISE_LOG_LEVEL    fatal, error, warn, info (default), debug, trace or silent`;

async function loadTasks(module: string | undefined): Promise<TaskRunner[]> {
  if (!module) return [];
  return [functionRunner(await loadTasksModule(module, "STEPWISE_TASKS"))];
}

export const serveCommand: Command = {
  name: "serve",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      flags: ["no-worker"],
      values: [
        "port",
        "host",
        "api-processes",
        "concurrency",
        "task-concurrency",
        "fire-concurrency",
      ],
    });
    if (args.positionals.length > 0) throw new UsageError("serve takes no positional arguments");
    const config = serviceConfig(args.values);
    const { api: apiConfig, worker: workerConfig, tasks } = config;
    const level = config.log.level;
    const apiKeys = apiConfig.keys;
    const prefix = config.runtime.prefix;
    // Set in the API processes a primary forked; undefined in a lone serve and in the primary.
    const apiProcess = apiProcessIndex(apiConfig.processIndex);
    let taskRunners: TaskRunner[];
    try {
      taskRunners = await loadTasks(tasks.module);
    } catch (err) {
      throw new UsageError((err as Error).message, false);
    }

    const redis = await chooseRedis({
      redisUrl: config.redis.url ?? clusterSeedUrl(config.redis.cluster),
      localPort: config.redis.localPort,
      path: config.redis.searchPath,
    });
    if (redis.source === "none") {
      io.stderr(`stepwise serve: ${redis.message}\n`);
      return EXIT.failed;
    }
    if (apiProcess === undefined && apiConfig.processes > 1) {
      return superviseServe({
        launchedByNpx: config.launchedByNpx,
        count: apiConfig.processes,
        argv,
        redis,
        level,
        host: apiConfig.host,
      });
    }
    const redisUrl = redis.url;
    const shownUrl = redactRedisUrl(redisUrl);
    // Connection errors of the runtime's first connections come before the server's
    // logger exists: JSON lines from the start, like everything serve prints.
    const early = createLogger(level);
    setConnectionLog((lvl, message, fields) => early[lvl](fields, message));
    // Express executions run in this process: they call the same Task runners as the worker.
    const settings = runtimeSettings(config, redisUrl);
    // A step whose expressions would hold this thread (and every request) runs on the
    // evaluation thread instead (runtime/offload/).
    const offload = offloadHeavySteps();
    // Requests fail fast while Redis is away (503), rather than hang until it is back.
    const runtime = createRedisRuntime({
      ...settings,
      failFast: true,
      taskRunners,
      runners: runnerOptions(config),
    });
    // One registry for the API and the worker: one scrape shows both.
    const registry = createRegistry();
    registerOffloadMetrics(registry, offload);
    // A connection of its own for /health, so a busy runtime connection cannot mask an outage.
    const probe = new Redis(redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
    });
    probe.on("error", () => {
      // Reported by /health; ioredis reconnects by itself.
    });
    void probe.connect().catch(() => undefined);

    const app = await buildServer({
      runtime,
      apiKeys,
      logger: { level },
      maxWaitSeconds: apiConfig.maxWaitSeconds,
      slowRequestMs: apiConfig.slowRequestMs,
      limits: apiConfig.limits,
      admission: new Admission(apiConfig.admission, () => runtime.backlog()),
      registry,
      ...(apiConfig.consoleDir !== undefined ? { consoleDir: apiConfig.consoleDir } : {}),
      // TestState calls a Task's resource with the workers' runners, egress policy included.
      taskRunners: [...taskRunners, ...defaultRunners(runnerOptions(config))],
      serves: servedBy([...taskRunners, ...defaultRunners()]),
      ...(apiProcess !== undefined ? { requestIdPrefix: `p${apiProcess}-` } : {}),
      // Unauthenticated callers learn that Redis is unavailable, never its address
      // (the log names it: runtime/store/connection-errors.ts).
      health: async () => {
        if (probe.status !== "ready") throw new Error("unavailable");
        await probe.ping();
      },
      redisConnected: () => probe.status === "ready",
    });
    containStrayErrors((kind, err) =>
      app.log.error({ err, kind }, "contained an error no handler caught"),
    );
    setConnectionLog((level, message, fields) => app.log[level](fields, message));
    if (apiConfig.hostWarning) app.log.warn(apiConfig.hostWarning);
    if (redis.source === "private") {
      app.log.info(
        { redis: shownUrl, pid: redis.local.pid, dir: redis.local.dir },
        `no Redis answered at ${shownUrl}: started a private redis-server there (pid ${redis.local.pid}, AOF in ${redis.local.dir}), stopped with this service`,
      );
    }

    let worker: StepwiseWorker | undefined;
    let failures: FailureLog | undefined;
    let webhooks: ApprovalWebhookRelay | undefined;
    let closing: Promise<void> | undefined;
    // In an API process, closing the server while node:cluster's primary has not yet
    // answered its listen throws inside Node (a null handle) and the listen never
    // settles: a signal in that window would leave the process hanging. So a shutdown
    // waits for the listen to settle, either way, before it closes the server.
    let listened: Promise<unknown> = Promise.resolve();
    // Likewise a worker still starting: stopping the private Redis under it left its
    // connections retrying, and the process up. A shutdown lets the start finish first.
    let workerStarting: Promise<void> = Promise.resolve();
    const aborted = new AbortController();
    const shutdown = (signal: string): Promise<void> => (closing ??= drain(signal));
    const drain = async (signal: string): Promise<void> => {
      aborted.abort();
      app.log.info({ signal }, "shutting down: draining requests and the worker's jobs");
      // Bounded whatever Redis does: a drain waiting on a Redis that is gone would never end.
      // (A private redis-server is signalled on exit: cli/local-redis.ts.)
      exitAfter(config.shutdownSeconds, (message) => app.log.error({ signal }, message));
      await listened.catch(() => undefined);
      // Stop taking requests first, then let the worker finish the jobs it holds
      // (an unfinished job would be redelivered anyway; finishing is just faster).
      await app.close().catch((err: unknown) => app.log.error({ err }, "closing the API"));
      await workerStarting.catch(() => undefined);
      await webhooks?.close().catch((err: unknown) => app.log.error({ err }, "closing webhooks"));
      await worker
        ?.close(drainMs(config.shutdownSeconds))
        .catch((err: unknown) => app.log.error({ err }, "closing the worker"));
      await failures?.close();
      await runtime.close().catch((err: unknown) => app.log.error({ err }, "closing the runtime"));
      await offload.close();
      probe.disconnect();
      // The private Redis goes last: everything above may still write to it.
      if (redis.source === "private") await redis.local.stop();
    };

    const stopped = new Promise<void>((resolveStopped) => {
      const stop = (reason: string): void => void shutdown(reason).then(resolveStopped);
      for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => stop(signal));
      if (config.launchedByNpx && apiProcess === undefined) {
        whenLauncherGone(() => stop("npx exited"));
      }
    });
    try {
      listened = app.listen({ port: apiConfig.port, host: apiConfig.host });
      await listened;
    } catch (err) {
      io.stderr(
        `stepwise serve: cannot listen on ${apiConfig.host}:${apiConfig.port}: ${(err as Error).message}\n`,
      );
      await shutdown("listen-failed");
      return EXIT.failed;
    }
    const listening = app.server.address();
    const listeningPort =
      typeof listening === "object" && listening ? listening.port : apiConfig.port;
    const api = `http://${apiConfig.host}:${listeningPort}`;

    if (redis.source === "REDIS_URL") {
      // The API is up meanwhile, answering /health with 503, so a supervisor sees why.
      let lastReason = "";
      const answered = await waitForRedis(redisUrl, {
        timeoutMs: config.redis.connectTimeoutSeconds * 1000,
        signal: aborted.signal,
        onAttempt: ({ attempt, reason, nextInMs }) => {
          lastReason = reason;
          if (nextInMs === undefined) return;
          app.log.warn(
            { redis: shownUrl, attempt, reason },
            `Redis at ${shownUrl} does not answer (${reason}); attempt ${attempt}, next in ${(nextInMs / 1000).toFixed(1)} s, giving up after ${config.redis.connectTimeoutSeconds} s (STEPWISE_CONNECT_TIMEOUT)`,
          );
        },
      });
      if (!answered) {
        if (closing) {
          await stopped;
          return EXIT.ok;
        }
        app.log.error(
          { redis: shownUrl, reason: lastReason },
          `giving up: Redis at ${shownUrl} did not answer within ${config.redis.connectTimeoutSeconds} s (${lastReason}). Is Redis running? Fix REDIS_URL, or unset it to let stepwise serve start its own redis-server`,
        );
        await shutdown("redis-unreachable");
        return EXIT.failed;
      }
    }

    // Of several API processes, the first runs the worker: one engine room per serve.
    const runsWorker = !args.flags.has("no-worker") && (apiProcess ?? 0) === 0;
    if (runsWorker && !closing) {
      workerStarting = (async () => {
        worker = await startWorker({
          ...settings,
          ...workerOptions(config),
          taskRunners,
          ...workerMetrics(registry),
          // The API's pino logger: the worker's lines come out beside the API's, alike.
          logger: app.log,
        });
        // Its starts are advanced by this worker without the queue's round trips.
        await runtime.advanceStartsWith(worker);
        failures = await logFailedExecutions({
          redis: runtime.settings,
          layout: await runtime.shardLayout(),
          describe: (id) => runtime.describeExecution(id),
          log: (record) =>
            app.log.warn(
              failureFields(record),
              `execution ${record.executionId} ${record.status}: ${record.error ?? "no error name"}`,
            ),
        });
        webhooks = config.webhook
          ? await startApprovalWebhookRelay({
              ...runtime.settings,
              ...config.webhook,
              egress: tasks.egress,
              onError: (err) =>
                app.log.warn(
                  { err },
                  `approval webhook: ${err instanceof Error ? err.message : String(err)}`,
                ),
            })
          : undefined;
      })();
      // (A signal that came meanwhile: its drain closes them once they started.)
      await workerStarting;
    }
    const version = stepwiseVersion();
    app.log.info(
      {
        version,
        redis: shownUrl,
        api,
        worker: worker
          ? {
              concurrency: workerConfig.concurrency,
              taskConcurrency: workerConfig.taskConcurrency,
              fireConcurrency: workerConfig.fireConcurrency,
            }
          : false,
        ...(apiProcess !== undefined ? { apiProcess } : {}),
        prefix,
        keys: apiKeys.map((k) => `${k.name}:${k.scope}`),
      },
      `stepwise ${version} ready: API ${api}, Redis ${shownUrl}, ${worker ? `worker concurrency ${workerConfig.concurrency} per shard` : "no worker (--no-worker)"}`,
    );
    if (apiProcess !== undefined && !closing) reportReady(listeningPort);
    // Everything is closed once this resolves, so the process exits by itself.
    await stopped;
    return EXIT.ok;
  },
};

/**
 * The primary of `serve --api-processes N`: it chose Redis (and owns a private
 * redis-server it started), forks the API processes, says when all of them listen,
 * and stops them on SIGINT/SIGTERM.
 */
async function superviseServe(o: {
  launchedByNpx: boolean;
  count: number;
  argv: readonly string[];
  redis: Exclude<RedisChoice, { source: "none" }>;
  level: string;
  host: string;
}): Promise<number> {
  const log = createLogger(o.level);
  const shownUrl = redactRedisUrl(o.redis.url);
  if (o.redis.source === "private") {
    log.info(
      { redis: shownUrl, pid: o.redis.local.pid, dir: o.redis.local.dir },
      `no Redis answered at ${shownUrl}: started a private redis-server there (pid ${o.redis.local.pid}, AOF in ${o.redis.local.dir}), stopped with this service`,
    );
  }
  const processes = superviseApiProcesses({
    count: o.count,
    argv: o.argv,
    // The children use the Redis chosen here, not a choice of their own.
    env: o.redis.source === "REDIS_URL" ? {} : { REDIS_URL: o.redis.url },
    log,
  });
  for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, processes.stop);
  if (o.launchedByNpx) whenLauncherGone(processes.stop);
  const port = await processes.ready;
  if (port !== undefined) {
    const version = stepwiseVersion();
    const api = `http://${o.host}:${port}`;
    log.info(
      { version, api, apiProcesses: o.count, redis: shownUrl, pid: process.pid },
      `stepwise ${version} ready: API ${api} in ${o.count} processes (the first runs the worker unless --no-worker), Redis ${shownUrl}`,
    );
  }
  const code = await processes.exited;
  if (o.redis.source === "private") await o.redis.local.stop();
  return code;
}
