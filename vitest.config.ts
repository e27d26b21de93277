import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

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
    include: ["test/**/*.test.ts"],
  },
});
