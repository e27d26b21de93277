import { Redis } from "ioredis";
import { listenAddress, parseApiKeys } from "../../api/auth.js";
import { createRegistry } from "../../api/metrics.js";
import { buildServer } from "../../api/server.js";
import { connectionLimitsFromEnv } from "../../api/connection-limits.js";
import { Admission, admissionFromEnv } from "../../api/admission.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { setConnectionLog } from "../../runtime/connection-errors.js";
import { failureFields, logFailedExecutions, type FailureLog } from "../../runtime/failure-log.js";
import { startWorker, type StepwiseWorker } from "../../runtime/worker.js";
import { workerMetrics } from "../../runtime/worker-metrics.js";
import {
  checkRunnerSettings,
  defaultRunners,
  functionRunner,
  servedBy,
} from "../../task-runners/index.js";
import { webhooksFromEnv } from "../../runtime/approval-webhook-settings.js";
import type { TaskRunner } from "../../task-runners/runner.js";
import { integerSetting, parseArgs } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";
import { loadEndpoints } from "../../task-runners/model/endpoints.js";
import { containStrayErrors } from "../containment.js";
import { redactRedisUrl, waitForRedis } from "../redis-connection.js";
import { createLogger, LOG_LEVELS } from "../logger.js";
import { chooseRedis, clusterSeedUrl, type RedisChoice } from "../serve-redis.js";
import { apiProcessIndex, reportReady, superviseApiProcesses } from "../api-processes.js";
import { loadTasksModule } from "../tasks-module.js";
import { stepwiseVersion } from "../version.js";

const usage = `Usage: stepwise serve [--port N] [--host H] [--no-worker] [--api-processes N]

Runs the REST API (and, unless --no-worker, a worker that advances executions) in
one process. Every setting is an environment variable; options override them.

Options:
  --port N       the port to listen on (PORT, default 8080)
  --host H       the interface to bind (HOST, default 0.0.0.0; 127.0.0.1 without API keys)
  --no-worker    serve the API only; run workers with \`stepwise worker\`
  --api-processes N  answer the API from N processes sharing the port
                 (STEPWISE_API_PROCESSES, default 1); the worker runs in the first

Environment:
  REDIS_URL             Redis to use. Unset: redis://127.0.0.1:6379 when something
                        answers there, else a private redis-server started by serve
                        (AOF in ./.stepwise/redis/, stopped with the service)
  STEPWISE_LOCAL_REDIS_PORT  the port of that default address (default 6379)
  STEPWISE_CONNECT_TIMEOUT   seconds to keep trying REDIS_URL at start-up before
                        giving up with exit 1 (default 30)
  PORT, HOST            where to listen (see above)
  STEPWISE_API_KEYS     name:scope:secret,... (scopes: admin, run, callback, approve); without
                        keys authentication is off and the API binds to 127.0.0.1 only
  STEPWISE_PREFIX       Redis key prefix (default stepwise)
  STEPWISE_TASKS        a JS module: named function exports serve function:<name>;
                        a default export object maps Resource strings to functions
  STEPWISE_CONCURRENCY  transitions the worker runs at once on each shard (default 16)
  STEPWISE_MAX_WAIT     longest ?wait= of a start, in seconds (default 300)
  STEPWISE_APPROVER_GROUPS   approve keys' groups: alice=finance|legal;bob=finance
  STEPWISE_APPROVAL_WEBHOOK  POST approval events here, signed with STEPWISE_WEBHOOK_SECRET
  STEPWISE_EGRESS_ALLOW cidr|ip|host,... that HTTP tasks and webhooks may reach although
                        loopback, private, link-local or reserved (default: none)
  STEPWISE_HTTP_MAX_RESPONSE_BYTES  longest HTTP task response body read (default 262144)
  STEPWISE_REQUEST_TIMEOUT_MS   a request's headers and body must arrive within this (30000)
  STEPWISE_HEADERS_TIMEOUT_MS   its headers within this (10000)
  STEPWISE_KEEP_ALIVE_TIMEOUT_MS  idle keep-alive connections close after this (72000)
  STEPWISE_MAX_CONNECTIONS      connections open at once (10000; 0: no limit)
  STEPWISE_MAX_REQUESTS_PER_SOCKET  requests per connection (0: no limit)
  STEPWISE_START_RATE, STEPWISE_START_BURST  starts per second per API key and per state
                        machine, and the burst (300, 1300; rate 0: no limit); past them 429
  STEPWISE_MAX_BACKLOG  waiting transitions above which starts are refused (100000; 0: off)
  LOG_LEVEL             fatal, error, warn, info (default), debug, trace or silent`;

async function loadTasks(module: string | undefined): Promise<TaskRunner[]> {
  if (!module) return [];
  return [functionRunner(await loadTasksModule(module, "STEPWISE_TASKS"))];
}

export const serveCommand: Command = {
  name: "serve",
  summary: "run the REST API (and a worker) on Redis",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      flags: ["no-worker"],
      values: ["port", "host", "api-processes"],
    });
    if (args.positionals.length > 0) throw new UsageError("serve takes no positional arguments");
    const env = process.env;
    const port = integerSetting("--port/PORT", args.values.get("port") ?? env.PORT, 8080, 0, 65535);
    const maxWaitSeconds = integerSetting("STEPWISE_MAX_WAIT", env.STEPWISE_MAX_WAIT, 300, 0, 3600);
    const concurrency = integerSetting(
      "STEPWISE_CONCURRENCY",
      env.STEPWISE_CONCURRENCY,
      16,
      1,
      10_000,
    );
    const connectTimeout = integerSetting(
      "STEPWISE_CONNECT_TIMEOUT",
      env.STEPWISE_CONNECT_TIMEOUT,
      30,
      1,
      3600,
    );
    const localPort = integerSetting(
      "STEPWISE_LOCAL_REDIS_PORT",
      env.STEPWISE_LOCAL_REDIS_PORT,
      6379,
      1,
      65535,
    );
    const apiProcesses = integerSetting(
      "--api-processes/STEPWISE_API_PROCESSES",
      args.values.get("api-processes") ?? env.STEPWISE_API_PROCESSES,
      1,
      1,
      64,
    );
    // Set in the API processes a primary forked; undefined in a lone serve and in the primary.
    const apiProcess = apiProcessIndex();
    const level = env.LOG_LEVEL ?? "info";
    if (!LOG_LEVELS.includes(level))
      throw new UsageError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
    let limits;
    let admissionSettings;
    try {
      checkRunnerSettings(env);
      limits = connectionLimitsFromEnv(env);
      admissionSettings = admissionFromEnv(env);
    } catch (err) {
      throw new UsageError((err as Error).message, false);
    }
    let apiKeys;
    try {
      apiKeys = parseApiKeys(env.STEPWISE_API_KEYS);
    } catch (err) {
      io.stderr(`stepwise serve: ${(err as Error).message}\n`);
      return EXIT.usage;
    }
    try {
      // The workers' model runners read it too; a bad file is a configuration error, said once here.
      loadEndpoints(env);
    } catch (err) {
      io.stderr(`stepwise serve: ${(err as Error).message}\n`);
      return EXIT.usage;
    }
    const prefix = env.STEPWISE_PREFIX ?? "stepwise";
    const address = listenAddress(apiKeys, args.values.get("host") ?? env.HOST);
    const taskRunners = await loadTasks(env.STEPWISE_TASKS);

    const redis = await chooseRedis({
      redisUrl: env.REDIS_URL || clusterSeedUrl(env),
      localPort,
      path: env.PATH,
    });
    if (redis.source === "none") {
      io.stderr(`stepwise serve: ${redis.message}\n`);
      return EXIT.failed;
    }
    if (apiProcess === undefined && apiProcesses > 1) {
      return superviseServe({ count: apiProcesses, argv, redis, level, host: address.host });
    }
    const redisUrl = redis.url;
    const shownUrl = redactRedisUrl(redisUrl);
    // Connection errors of the runtime's first connections come before the server's
    // logger exists: JSON lines from the start, like everything serve prints.
    const early = createLogger(level);
    setConnectionLog((lvl, message, fields) => early[lvl](fields, message));
    // Express executions run in this process: they call the same Task runners as the worker.
    const runtime = createRedisRuntime({ redisUrl, prefix, taskRunners });
    // One registry for the API and the worker: one scrape shows both.
    const registry = createRegistry();
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
      maxWaitSeconds,
      limits,
      admission: new Admission(admissionSettings, () => runtime.backlog()),
      registry,
      serves: servedBy([...taskRunners, ...defaultRunners()]),
      ...(apiProcess !== undefined ? { requestIdPrefix: `p${apiProcess}-` } : {}),
      health: async () => {
        if (probe.status !== "ready") throw new Error(`not connected to ${shownUrl}`);
        await probe.ping();
      },
    });
    containStrayErrors((kind, err) =>
      app.log.error({ err, kind }, "contained an error no handler caught"),
    );
    setConnectionLog((level, message, fields) => app.log[level](fields, message));
    if (address.warning) app.log.warn(address.warning);
    if (redis.source === "private") {
      app.log.info(
        { redis: shownUrl, pid: redis.local.pid, dir: redis.local.dir },
        `no Redis answered at ${shownUrl}: started a private redis-server there (pid ${redis.local.pid}, AOF in ${redis.local.dir}), stopped with this service`,
      );
    }

    let worker: StepwiseWorker | undefined;
    let failures: FailureLog | undefined;
    let webhooks: Awaited<ReturnType<typeof webhooksFromEnv>>;
    let closing: Promise<void> | undefined;
    // In an API process, closing the server while node:cluster's primary has not yet
    // answered its listen throws inside Node (a null handle) and the listen never
    // settles: a signal in that window would leave the process hanging. So a shutdown
    // waits for the listen to settle, either way, before it closes the server.
    let listened: Promise<unknown> = Promise.resolve();
    // Likewise a worker still starting: stopping the private Redis under it left its
    // connections retrying, and the process up. A shutdown lets the start finish first.
    let workerStarting: Promise<Error | undefined> = Promise.resolve(undefined);
    const aborted = new AbortController();
    const shutdown = (signal: string): Promise<void> => (closing ??= drain(signal));
    const drain = async (signal: string): Promise<void> => {
      aborted.abort();
      app.log.info({ signal }, "shutting down: draining requests and the worker's jobs");
      await listened.catch(() => undefined);
      // Stop taking requests first, then let the worker finish the jobs it holds
      // (an unfinished job would be redelivered anyway; finishing is just faster).
      await app.close().catch((err: unknown) => app.log.error({ err }, "closing the API"));
      await workerStarting.catch(() => undefined);
      await webhooks?.close().catch((err: unknown) => app.log.error({ err }, "closing webhooks"));
      await worker?.close().catch((err: unknown) => app.log.error({ err }, "closing the worker"));
      await failures?.close();
      await runtime.close().catch((err: unknown) => app.log.error({ err }, "closing the runtime"));
      probe.disconnect();
      // The private Redis goes last: everything above may still write to it.
      if (redis.source === "private") await redis.local.stop();
    };

    const stopped = new Promise<void>((resolveStopped) => {
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        process.once(signal, () => void shutdown(signal).then(resolveStopped));
      }
    });
    try {
      listened = app.listen({ port, host: address.host });
      await listened;
    } catch (err) {
      io.stderr(
        `stepwise serve: cannot listen on ${address.host}:${port}: ${(err as Error).message}\n`,
      );
      await shutdown("listen-failed");
      return EXIT.failed;
    }
    const listening = app.server.address();
    const listeningPort = typeof listening === "object" && listening ? listening.port : port;
    const api = `http://${address.host}:${listeningPort}`;

    if (redis.source === "REDIS_URL") {
      // The API is up meanwhile, answering /health with 503, so a supervisor sees why.
      let lastReason = "";
      const answered = await waitForRedis(redisUrl, {
        timeoutMs: connectTimeout * 1000,
        signal: aborted.signal,
        onAttempt: ({ attempt, reason, nextInMs }) => {
          lastReason = reason;
          if (nextInMs === undefined) return;
          app.log.warn(
            { redis: shownUrl, attempt, reason },
            `Redis at ${shownUrl} does not answer (${reason}); attempt ${attempt}, next in ${(nextInMs / 1000).toFixed(1)} s, giving up after ${connectTimeout} s (STEPWISE_CONNECT_TIMEOUT)`,
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
          `giving up: Redis at ${shownUrl} did not answer within ${connectTimeout} s (${lastReason}). Is Redis running? Fix REDIS_URL, or unset it to let stepwise serve start its own redis-server`,
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
          redisUrl,
          prefix,
          concurrency,
          taskRunners,
          ...workerMetrics(registry),
          // The API's pino logger: the worker's lines come out beside the API's, alike.
          logger: app.log,
        });
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
        try {
          webhooks = await webhooksFromEnv(env, {
            ...runtime.settings,
            onError: (err) =>
              app.log.warn(
                { err },
                `approval webhook: ${err instanceof Error ? err.message : String(err)}`,
              ),
          });
        } catch (err) {
          return err as Error;
        }
        return undefined;
      })();
      // (A signal that came meanwhile: its drain closes them once they started.)
      const badSettings = await workerStarting;
      if (badSettings) {
        app.log.error({ err: badSettings }, badSettings.message);
        await shutdown("webhook-settings");
        return EXIT.usage;
      }
    }
    const version = stepwiseVersion();
    app.log.info(
      {
        version,
        redis: shownUrl,
        api,
        worker: worker ? { concurrency } : false,
        ...(apiProcess !== undefined ? { apiProcess } : {}),
        prefix,
        keys: apiKeys.map((k) => `${k.name}:${k.scope}`),
      },
      `stepwise ${version} ready: API ${api}, Redis ${shownUrl}, ${worker ? `worker concurrency ${concurrency}` : "no worker (--no-worker)"}`,
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
