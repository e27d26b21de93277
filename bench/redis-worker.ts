// A worker process for bench/redis-bench.ts (env: REDIS_URL, STEPWISE_PREFIX, BENCH_CONCURRENCY).
import { startWorker } from "../runtime/worker.js";

const worker = await startWorker({
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 64),
  // The Map bench fans out to 40,000 items, far past AWS's 25,000-event history quota.
  maxHistoryEvents: 0,
  onError: (err) => process.stderr.write(`worker: ${String(err)}\n`),
});
process.on("SIGTERM", () => void worker.close().then(() => process.exit(0)));
process.stdout.write("worker ready\n");
