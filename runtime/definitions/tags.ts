import { RuntimeError, type TaggedResource } from "../contract/index.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";

/** AWS's quota: 50 tags per resource. */
export const MAX_TAGS = 50;

/** Tags of state machines and activities: one hash per resource (key → value). */
export class TagStore {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
  ) {}

  private key(resource: TaggedResource): string {
    return this.keys.tags(`${resource.kind === "stateMachine" ? "sm" : "act"}:${resource.name}`);
  }

  /** Adds or overwrites; refused whole (TooManyTags) when the result would pass 50. */
  async tag(resource: TaggedResource, tags: Record<string, string>): Promise<void> {
    const entries = Object.entries(tags);
    if (entries.length === 0) return;
    const existing = await this.client.redis.hkeys(this.key(resource));
    const total = new Set([...existing, ...Object.keys(tags)]).size;
    if (total > MAX_TAGS) {
      throw new RuntimeError(
        "TooManyTags",
        `A resource has at most ${MAX_TAGS} tags; this would give it ${total}`,
      );
    }
    await this.client.redis.hset(this.key(resource), tags);
  }

  async untag(resource: TaggedResource, keys: string[]): Promise<void> {
    if (keys.length > 0) await this.client.redis.hdel(this.key(resource), ...keys);
  }

  list(resource: TaggedResource): Promise<Record<string, string>> {
    return this.client.redis.hgetall(this.key(resource));
  }

  drop(resource: TaggedResource): Promise<number> {
    return this.client.redis.del(this.key(resource));
  }
}
