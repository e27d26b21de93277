import { decodeCursor, encodeCursor } from "../store/canonical.js";
import { RuntimeError, type Page, type PublishedVersion } from "../contract/index.js";
import { storedFields, toStored, VERSION_FIELDS } from "../store/fields.js";
import type { Keys } from "../store/keys.js";
import type { MachineStore } from "./machines.js";
import type { RedisClient } from "../store/redis.js";

/** A version's publication: when, and its description (`list` reads them in this order). */
const PUBLICATION = storedFields(VERSION_FIELDS, ["publishedAt", "description"]);

/**
 * Published versions (AWS PublishStateMachineVersion). Every update already makes
 * an immutable version that executions pin to; publishing marks one as addressable
 * by a qualified ARN and by aliases. So a published version keeps the number of the
 * version it publishes: one numbering for both APIs (unlike AWS, the numbers of
 * published versions may skip the versions nobody published).
 *
 * The published set is a sorted set; a version's description and publication time
 * live beside its definition (`description`, `publishedAt` in the version hash).
 */
export class VersionStore {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly machines: MachineStore,
  ) {}

  async publish(
    name: string,
    options: { description?: string; expectedVersion?: number },
  ): Promise<PublishedVersion & { created: boolean }> {
    const latest = await this.machines.latest(name);
    if (options.expectedVersion !== undefined && options.expectedVersion !== latest) {
      throw new RuntimeError(
        "RevisionMismatch",
        `State machine '${name}' is at revision ${latest}, not ${options.expectedVersion}`,
      );
    }
    const redis = this.client.redis;
    const added = await redis.zadd(this.keys.publishedVersions(name), "NX", latest, String(latest));
    if (Number(added) === 0) {
      const existing = await this.get(name, latest);
      // AWS: republishing the same revision answers the version, unless it would
      // change what the version says about itself.
      if (options.description !== undefined && options.description !== existing.description) {
        throw new RuntimeError(
          "RevisionMismatch",
          `Version ${latest} of '${name}' is published with another description`,
        );
      }
      return { ...existing, created: false };
    }
    const publishedAt = new Date().toISOString();
    const fields = toStored(VERSION_FIELDS, { publishedAt, description: options.description });
    await redis.hset(this.keys.machineVersion(name, latest), fields);
    const published: PublishedVersion = { name, version: latest, publishedAt };
    if (options.description !== undefined) published.description = options.description;
    return { ...published, created: true };
  }

  async get(name: string, version: number): Promise<PublishedVersion> {
    await this.machines.latest(name);
    const [score, pt, pd] = await Promise.all([
      this.client.redis.zscore(this.keys.publishedVersions(name), String(version)),
      this.client.redis.hget(this.keys.machineVersion(name, version), VERSION_FIELDS.publishedAt),
      this.client.redis.hget(this.keys.machineVersion(name, version), VERSION_FIELDS.description),
    ]);
    if (score === null || pt === null) {
      throw new RuntimeError(
        "StateMachineVersionDoesNotExist",
        `State machine '${name}' has no published version ${version}`,
      );
    }
    const published: PublishedVersion = { name, version, publishedAt: pt };
    if (pd !== null) published.description = pd;
    return published;
  }

  /** Newest first, as AWS lists them. */
  async list(
    name: string,
    options: { cursor?: string; limit?: number },
  ): Promise<Page<PublishedVersion>> {
    await this.machines.latest(name);
    const limit = Math.max(1, Math.min(options.limit ?? 100, 1000));
    let below = "+inf";
    if (options.cursor !== undefined) {
      const c = decodeCursor(options.cursor);
      if (!c || typeof c.below !== "number")
        throw new RuntimeError("InvalidCursor", "The cursor is not valid");
      below = `(${c.below}`;
    }
    const members = await this.client.redis.zrevrangebyscore(
      this.keys.publishedVersions(name),
      below,
      "-inf",
      "LIMIT",
      0,
      limit + 1,
    );
    const page = members.slice(0, limit).map(Number);
    const pipeline = this.client.redis.pipeline();
    for (const v of page) pipeline.hmget(this.keys.machineVersion(name, v), ...PUBLICATION);
    const rows = (await pipeline.exec()) ?? [];
    const items = page.map((version, i) => {
      const [pt, pd] = (rows[i]?.[1] ?? [null, null]) as [string | null, string | null];
      const item: PublishedVersion = { name, version, publishedAt: pt ?? "" };
      if (pd !== null) item.description = pd;
      return item;
    });
    const result: Page<PublishedVersion> = { items };
    if (members.length > limit) result.nextCursor = encodeCursor({ below: page[page.length - 1]! });
    return result;
  }

  /** Unpublishes; the definition stays for the executions that ran it. */
  async delete(name: string, version: number, routedBy: string[]): Promise<void> {
    await this.get(name, version);
    if (routedBy.length > 0) {
      throw new RuntimeError(
        "StateMachineVersionInUse",
        `Version ${version} of '${name}' is routed to by the alias(es) ${routedBy.join(", ")}; update or delete them first`,
      );
    }
    await this.client.redis
      .multi()
      .zrem(this.keys.publishedVersions(name), String(version))
      .hdel(this.keys.machineVersion(name, version), ...PUBLICATION)
      .exec();
  }
}
