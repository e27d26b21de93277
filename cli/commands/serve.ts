import { defaultRunners, servedBy } from "../../task-runners/index.js";
import { webhooksFromEnv } from "../../runtime/approval-webhook-settings.js";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { Redis } from "ioredis";
import { listenAddress, parseApiKeys } from "../../api/auth.js";
import { createRegistry } from "../../api/metrics.js";
import { buildServer } from "../../api/server.js";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { startWorker } from "../../runtime/worker.js";
import { workerMetrics } from "../../runtime/worker-metrics.js";
import { functionRunner, handlersFromModule } from "../../task-runners/index.js";
import type { TaskRunner } from "../../task-runners/runner.js";
import { integerSetting, parseArgs } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";
import { containStrayErrors } from "../containment.js";

const usage = `Usage: stepwise serve [--port N] [--host H] [--no-worker]

Runs the REST API (and, unless --no-worker, a worker that advances executions) in
one process. Every setting is an environment variable; options override them.

Options:
  --port N       the port to listen on (PORT, default 8080)
  --host H       the interface to bind (HOST, default 0.0.0.0; 127.0.0.1 without API keys)
  --no-worker    serve the API only; run workers with \`stepwise worker\`

Environment:
  REDIS_URL             Redis to use (default redis://127.0.0.1:6379)
  PORT, HOST            where to listen (see above)
  STEPWISE_API_KEYS     name:scope:secret,... (scopes: admin, run, callback, approve); without
                        keys authentication is off and the API binds to 127.0.0.1 only
  STEPWISE_PREFIX       Redis key prefix (default stepwise)
  STEPWISE_TASKS        a JS module whose exports map Task Resource names to handlers
  STEPWISE_CONCURRENCY  transitions one worker runs at once (default 16)
  STEPWISE_MAX_WAIT     longest ?wait= of a start, in seconds (default 300)
  STEPWISE_APPROVER_GROUPS   approve keys' groups: alice=finance|legal;bob=finance
  STEPWISE_APPROVAL_WEBHOOK  POST approval events here, signed with STEPWISE_WEBHOOK_SECRET
  LOG_LEVEL             fatal, error, warn, info (default), debug, trace or silent`;

const LOG_LEVELS = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];

/** STEPWISE_TASKS: a module whose function exports serve Task resources by name. */
async function loadTasks(module: string | undefined): Promise<TaskRunner[]> {
  if (!module) return [];
  const mod = (await import(pathToFileURL(resolve(module)).href)) as Record<string, unknown>;
  return [functionRunner(handlersFromModule(mod))];
}

export const serveCommand: Command = {
  name: "serve",
  summary: "run the REST API (and a worker) on Redis",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: ["no-worker"], values: ["port", "host"] });
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
    const level = env.LOG_LEVEL ?? "info";
    if (!LOG_LEVELS.includes(level))
      throw new UsageError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(", ")}`);
    let apiKeys;
    try {
      apiKeys = parseApiKeys(env.STEPWISE_API_KEYS, env.STEPWISE_APPROVER_GROUPS);
    } catch (err) {
      io.stderr(`stepwise serve: ${(err as Error).message}\n`);
      return EXIT.usage;
    }
    const redisUrl = env.REDIS_URL ?? "redis://127.0.0.1:6379";
    const prefix = env.STEPWISE_PREFIX ?? "stepwise";
    const address = listenAddress(apiKeys, args.values.get("host") ?? env.HOST);

    const runtime = createRedisRuntime({ redisUrl, prefix });
    const taskRunners = await loadTasks(env.STEPWISE_TASKS);
    // One registry for the API and the worker: one scrape shows both.
    const registry = createRegistry();
    const worker = args.flags.has("no-worker")
      ? undefined
      : await startWorker({
          redisUrl,
          prefix,
          concurrency,
          taskRunners,
          onTransition: workerMetrics(registry).onTransition,
        });
    let webhooks;
    try {
      webhooks = worker ? await webhooksFromEnv(env, { redisUrl, prefix }) : undefined;
    } catch (err) {
      io.stderr(`stepwise serve: ${(err as Error).message}\n`);
      await worker?.close();
      await runtime.close();
      return EXIT.usage;
    }
    // A connection of its own for /health, so a busy runtime connection cannot mask an outage.
    const probe = new Redis(redisUrl, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
    });
    probe.on("error", () => {
      // Reported by /health; ioredis reconnects by itself.
    });
    await probe.connect().catch(() => undefined);

    const app = await buildServer({
      runtime,
      apiKeys,
      logger: { level },
      maxWaitSeconds,
      registry,
      serves: servedBy([...taskRunners, ...defaultRunners()]),
      health: async () => {
        await probe.ping();
      },
    });
    containStrayErrors((kind, err) =>
      app.log.error({ err, kind }, "contained an error no handler caught"),
    );
    if (address.warning) app.log.warn(address.warning);
    app.log.info(
      { keys: apiKeys.map((k) => `${k.name}:${k.scope}`), worker: worker !== undefined, prefix },
      "starting",
    );

    let closing = false;
    const shutdown = async (signal: string): Promise<void> => {
      if (closing) return;
      closing = true;
      app.log.info({ signal }, "shutting down: draining requests and the worker's jobs");
      // Stop taking requests first, then let the worker finish the jobs it holds
      // (an unfinished job would be redelivered anyway; finishing is just faster).
      await app.close().catch((err: unknown) => app.log.error({ err }, "closing the API"));
      await webhooks?.close().catch((err: unknown) => app.log.error({ err }, "closing webhooks"));
      await worker?.close().catch((err: unknown) => app.log.error({ err }, "closing the worker"));
      await runtime.close().catch((err: unknown) => app.log.error({ err }, "closing the runtime"));
      probe.disconnect();
    };

    const stopped = new Promise<void>((resolveStopped) => {
      for (const signal of ["SIGINT", "SIGTERM"] as const) {
        process.once(signal, () => void shutdown(signal).then(resolveStopped));
      }
    });
    try {
      await app.listen({ port, host: address.host });
    } catch (err) {
      io.stderr(
        `stepwise serve: cannot listen on ${address.host}:${port}: ${(err as Error).message}\n`,
      );
      await shutdown("listen-failed");
      return EXIT.failed;
    }
    // Everything is closed once this resolves, so the process exits by itself.
    await stopped;
    return EXIT.ok;
  },
};
