import { createRegistry } from "../../api/metrics.js";
import { startWorker } from "../../runtime/worker.js";
import { workerMetrics } from "../../runtime/worker-metrics.js";
import { functionRunner } from "../../task-runners/function.js";
import type { TaskRunner } from "../../task-runners/runner.js";
import { integerSetting, numberOption, parseArgs } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";
import { serveMetrics, type MetricsServer } from "../metrics-server.js";
import { loadTasksModule } from "../tasks-module.js";

const usage = `Usage: stepwise worker [--concurrency N] [--task-concurrency N] [--metrics-port N]

Runs a durable worker: advances executions stored in Redis one transition per
BullMQ job, fires timers, and calls task resources. Run as many as you like, on
as many machines as you like, against one Redis. SIGTERM/SIGINT finish the jobs
in flight (or hand them back after 10 s) and exit.

Options:
  --concurrency N       transitions processed at once (default 32)
  --task-concurrency N  task calls in flight at once (default 64)
  --metrics-port N      serve this worker's Prometheus metrics at http://<any>:N/metrics
                        (STEPWISE_METRICS_PORT; default: none)

Environment:
  REDIS_URL              redis://host:port (default redis://127.0.0.1:6379)
  STEPWISE_PREFIX        key prefix (default stepwise)
  STEPWISE_TASKS         a JS module: named function exports serve
                         \`function:<name>\`; a default export object maps
                         Resource strings to functions
  STEPWISE_METRICS_PORT  as --metrics-port`;

async function loadRunners(path: string | undefined): Promise<TaskRunner[]> {
  if (!path) return [];
  return [functionRunner(await loadTasksModule(path, "STEPWISE_TASKS"))];
}

export const workerCommand: Command = {
  name: "worker",
  summary: "run a durable worker against Redis (REDIS_URL)",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { values: ["concurrency", "task-concurrency", "metrics-port"] });
    if (args.positionals.length > 0) throw new UsageError("worker takes no positional arguments");
    const concurrency = numberOption(args, "concurrency", 1) ?? 32;
    const taskConcurrency = numberOption(args, "task-concurrency", 1) ?? 64;
    const rawPort = args.values.get("metrics-port") ?? process.env.STEPWISE_METRICS_PORT;
    // Port 0 picks a free port (printed when ready).
    const metricsPort =
      rawPort === undefined || rawPort === ""
        ? undefined
        : integerSetting("--metrics-port/STEPWISE_METRICS_PORT", rawPort, 0, 0, 65535);
    const taskRunners = await loadRunners(process.env.STEPWISE_TASKS);
    // A worker's transition counts live in its own process: without a port, nobody sees them.
    const registry = metricsPort !== undefined ? createRegistry() : undefined;
    const worker = await startWorker({
      concurrency,
      taskConcurrency,
      taskRunners,
      onError: (err) =>
        io.stderr(`stepwise worker: ${err instanceof Error ? err.message : String(err)}\n`),
      ...(registry ? { onTransition: workerMetrics(registry).onTransition } : {}),
    });
    let metrics: MetricsServer | undefined;
    if (registry && metricsPort !== undefined) {
      try {
        metrics = await serveMetrics(registry, metricsPort);
      } catch (err) {
        io.stderr(
          `stepwise worker: cannot serve metrics on port ${metricsPort}: ${(err as Error).message}\n`,
        );
        await worker.close();
        return EXIT.failed;
      }
    }
    io.stdout(
      `stepwise worker: ready (prefix ${process.env.STEPWISE_PREFIX ?? "stepwise"}, concurrency ${concurrency}` +
        `${metrics ? `, metrics on port ${metrics.port}` : ""})\n`,
    );
    await new Promise<void>((done) => {
      const stop = (signal: string): void => {
        io.stdout(`stepwise worker: ${signal}, finishing jobs in flight\n`);
        void Promise.all([worker.close(), metrics?.close()]).then(() => done());
      };
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
    });
    return EXIT.ok;
  },
};
