import { availableParallelism } from "node:os";
import { configDefaults, defineConfig } from "vitest/config";

/**
 * One CPU-bound file runs after everything else, alone: a Map of 16,000 items and
 * a Parallel of 16,000 branches through one `stepwise serve` (about 100 s on its
 * own on 2 cores). Beside the other files it took 205–430 s and slowed them as
 * much; the suite's wall time was its time plus theirs anyway.
 */
const ALONE_AT_THE_END = ["test/e2e/wide-joins.test.ts"];

export default defineConfig({
  test: {
    // REDIS_URL, or the Redis at 127.0.0.1:6379, or a private redis-server.
    globalSetup: ["test/global-redis.ts", "test/global-build.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Two files at once even on 2 cores (vitest's default there is one): most tests
    // wait on Redis, sockets and timers, and each uses its own key prefix and ports.
    // On this 2-core machine the suite took 556 s one file at a time, 316 s two at once.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: "suite",
          include: ["test/**/*.test.ts"],
          exclude: [...configDefaults.exclude, ...ALONE_AT_THE_END],
        },
      },
      {
        extends: true,
        test: { name: "alone", include: ALONE_AT_THE_END, sequence: { groupOrder: 1 } },
      },
    ],
  },
});
