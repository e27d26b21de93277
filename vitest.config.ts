import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    // REDIS_URL, or the Redis at 127.0.0.1:6379, or a private redis-server.
    globalSetup: ["test/global-redis.ts"],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: "forks",
  },
});
