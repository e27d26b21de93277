// A worker process for bench/redis-bench.ts (env: REDIS_URL, STEPWISE_PREFIX, BENCH_CONCURRENCY).
import { applyProcessSettings, loadConfig, processEnvironment } from "../config/index.js";
import { runtimeSettings } from "../config/service.js";
import { startWorker } from "../runtime/worker/worker.js";

// Configured as `stepwise worker` is (REDIS_URL, STEPWISE_PREFIX, STEPWISE_* tuning).
const config = loadConfig(processEnvironment());
applyProcessSettings(config);
const worker = await startWorker({
  ...runtimeSettings(config, config.redis.url ?? "redis://127.0.0.1:6379"),
  concurrency: Number(process.env.BENCH_CONCURRENCY ?? 64),
  // The Map bench fans out to 40,000 items, far past AWS's 25,000-event history quota.
  maxHistoryEvents: 0,
  onError: (err) => process.stderr.write(`worker: ${String(err)}\n`),
});
process.on("SIGTERM", () => void worker.close().then(() => process.exit(0)));
process.stdout.write("worker ready\n");
