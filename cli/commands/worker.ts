import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import { startWorker } from "../../runtime/worker.js";
import { functionRunner, handlersFromModule } from "../../task-runners/function.js";
import type { TaskRunner } from "../../task-runners/runner.js";
import { numberOption, parseArgs } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";

const usage = `Usage: stepwise worker [--concurrency N] [--task-concurrency N]

Runs a durable worker: advances executions stored in Redis one transition per
BullMQ job, fires timers, and calls task resources. Run as many as you like, on
as many machines as you like, against one Redis. SIGTERM/SIGINT finish the jobs
in flight (or hand them back after 10 s) and exit.

Options:
  --concurrency N       transitions processed at once (default 32)
  --task-concurrency N  task calls in flight at once (default 64)

Environment:
  REDIS_URL          redis://host:port (default redis://127.0.0.1:6379)
  STEPWISE_PREFIX    key prefix (default stepwise)
  STEPWISE_TASKS     path of a JS module whose exported functions serve
                     \`function:<name>\` resources`;

async function loadRunners(path: string | undefined): Promise<TaskRunner[]> {
  if (!path) return [];
  let mod: Record<string, unknown>;
  try {
    mod = (await import(pathToFileURL(resolve(path)).href)) as Record<string, unknown>;
  } catch (err) {
    throw new UsageError(`cannot load STEPWISE_TASKS module '${path}': ${(err as Error).message}`);
  }
  return [functionRunner(handlersFromModule(mod))];
}

export const workerCommand: Command = {
  name: "worker",
  summary: "run a durable worker against Redis (REDIS_URL)",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { values: ["concurrency", "task-concurrency"] });
    if (args.positionals.length > 0) throw new UsageError("worker takes no positional arguments");
    const concurrency = numberOption(args, "concurrency", 1) ?? 32;
    const taskConcurrency = numberOption(args, "task-concurrency", 1) ?? 64;
    const taskRunners = await loadRunners(process.env.STEPWISE_TASKS);
    const worker = await startWorker({
      concurrency,
      taskConcurrency,
      taskRunners,
      onError: (err) =>
        io.stderr(`stepwise worker: ${err instanceof Error ? err.message : String(err)}\n`),
    });
    io.stdout(
      `stepwise worker: ready (prefix ${process.env.STEPWISE_PREFIX ?? "stepwise"}, concurrency ${concurrency})\n`,
    );
    await new Promise<void>((done) => {
      const stop = (signal: string): void => {
        io.stdout(`stepwise worker: ${signal}, finishing jobs in flight\n`);
        void worker.close().then(done);
      };
      process.once("SIGTERM", () => stop("SIGTERM"));
      process.once("SIGINT", () => stop("SIGINT"));
    });
    return EXIT.ok;
  },
};
