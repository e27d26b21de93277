import { describe, expect, it } from "vitest";
import { setConnectionLog, type ConnectionLog } from "../../runtime/store/connection-errors.js";
import { RedisClient } from "../../runtime/store/redis.js";
import { freePort } from "../e2e/processes.js";

/**
 * A Redis that does not answer is logged, once and then at most every 10 s per
 * connection, while ioredis keeps retrying (it used to be swallowed).
 */
describe("Redis connection errors", () => {
  it("are logged at once, naming the connection, and not once per retry", async () => {
    const lines: Parameters<ConnectionLog>[] = [];
    setConnectionLog((...line) => lines.push(line));
    const port = await freePort();
    const client = new RedisClient(`redis://127.0.0.1:${port}`, { name: "probe" });
    try {
      await new Promise((r) => setTimeout(r, 1500));
      expect(lines).toHaveLength(1);
      const [level, message, fields] = lines[0]!;
      expect(level).toBe("warn");
      expect(message).toMatch(/^Redis connection 'probe': .*ECONNREFUSED.*; retrying$/);
      expect(fields).toMatchObject({ connection: "probe" });
    } finally {
      client.redis.disconnect();
    }
  });
});
