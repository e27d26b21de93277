import { decodeCursor, encodeCursor } from "../store/canonical.js";
import { RuntimeError, type Activity, type Page } from "../contract/index.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";

/**
 * The activities created through the API (AWS CreateActivity): a registry of names,
 * one hash (name → creation time). A Task may name an activity that was never
 * created — Stepwise queues its tasks all the same (`act:<name>`, see callbacks.ts)
 * — but Describe/List/Delete and the AWS API's GetActivityTask know only these.
 */
export class ActivityStore {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
  ) {}

  /** Idempotent, as AWS's: creating an existing activity answers it. */
  async create(name: string): Promise<Activity & { created: boolean }> {
    const createdAt = new Date().toISOString();
    const set = await this.client.redis.hsetnx(this.keys.activities, name, createdAt);
    if (set === 1) return { name, createdAt, created: true };
    return { ...(await this.describe(name)), created: false };
  }

  async describe(name: string): Promise<Activity> {
    const createdAt = await this.client.redis.hget(this.keys.activities, name);
    if (createdAt === null) {
      throw new RuntimeError("ActivityDoesNotExist", `Activity '${name}' does not exist`);
    }
    return { name, createdAt };
  }

  /** In name order. */
  async list(options: { cursor?: string; limit?: number }): Promise<Page<Activity>> {
    const limit = Math.max(1, Math.min(options.limit ?? 100, 1000));
    let after = "";
    if (options.cursor !== undefined) {
      const c = decodeCursor(options.cursor);
      if (!c || typeof c.after !== "string")
        throw new RuntimeError("InvalidCursor", "The cursor is not valid");
      after = c.after;
    }
    const all = await this.client.redis.hgetall(this.keys.activities);
    const names = Object.keys(all)
      .filter((n) => n > after)
      .sort();
    const page = names.slice(0, limit);
    const result: Page<Activity> = { items: page.map((name) => ({ name, createdAt: all[name]! })) };
    if (names.length > limit) result.nextCursor = encodeCursor({ after: page[page.length - 1]! });
    return result;
  }

  /** AWS: deleting an activity that does not exist succeeds. */
  async delete(name: string): Promise<void> {
    await this.client.redis
      .multi()
      .hdel(this.keys.activities, name)
      .del(this.keys.tags(`act:${name}`))
      .exec();
  }
}
