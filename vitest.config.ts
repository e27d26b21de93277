import { availableParallelism } from "node:os";
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    // REDIS_URL, or the Redis at 127.0.0.1:6379, or a private redis-server.
    globalSetup: ["test/global-redis.ts", "test/global-build.ts"],
    // A no-op unless `npm run test:profile` asks each file for the CPU it used.
    setupFiles: ["test/cpu-profile.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
    // Test files share their worker processes' module cache instead of each importing
    // the runtime (fastify, BullMQ, ioredis, the engine) anew through vitest's module
    // runner: that import was 1.5-2 s of CPU for every file that touched Redis, and the
    // suite is CPU-bound on 2 cores (integration/: 179 s of CPU isolated, 103 s shared).
    // Files do not rely on fresh modules: each uses its own key prefix, ports and
    // processes, and leaves the environment as it found it.
    isolate: false,
    // One file more than there are cores (vitest's default is one fewer): most tests
    // wait on Redis, sockets, timers and the processes they started, and each uses its
    // own key prefix and ports. On the 2-core machine, with the above: 300 s two files
    // at once, 256 s three, 273 s four (CPU-bound, and timing bounds begin to slip).
    maxWorkers: Math.max(3, availableParallelism() + 1),
    include: ["test/**/*.test.ts"],
  },
});
