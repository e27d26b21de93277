import type { Redis } from "ioredis";
import { EXECUTION_FIELDS } from "../store/fields.js";
import type { ChildPattern } from "./child-parameters.js";

/**
 * The durable links between parents and their children:
 *  - `chl:wait`, in the control hash tag (`{sw}`, as triggers' keys: one Redis
 *    Cluster slot): child execution ARN → the parent task waiting for its end
 *    (`.sync`, `.sync:2`): the parent's execution, its task token and the pattern.
 *    Written by the runner after the start, removed once the child's end answered
 *    the token (or the parent no longer waits);
 *  - the child's own record (`x:<exec>` field `parentExecution`, every pattern): who
 *    started it, kept (and expiring) with the record.
 */
export interface ChildLink {
  parent: string;
  token: string;
  pattern: ChildPattern;
}

export function childKeys(prefix: string): { waiting: string } {
  return { waiting: `${prefix}:{sw}:chl:wait` };
}

export class ChildLinks {
  private readonly keys: { waiting: string };

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = childKeys(prefix);
  }

  /**
   * Records the child's parent on the child's record (`record`: its key), and for
   * `.sync` the token its end answers. Idempotent.
   */
  async link(record: string, child: string, parent: string, waiting?: ChildLink): Promise<void> {
    const multi = this.redis.multi().hset(record, EXECUTION_FIELDS.parentExecution, parent);
    if (waiting) multi.hset(this.keys.waiting, child, JSON.stringify(waiting));
    await multi.exec();
  }

  /**
   * Marks the child as started by this task attempt unless an attempt marked it
   * before: answers the attempt that did, and the child's status.
   */
  async claim(record: string, taskId: string): Promise<{ owner: string; status: string | null }> {
    const replies = (await this.redis
      .multi()
      .hsetnx(record, EXECUTION_FIELDS.parentTask, taskId)
      .hget(record, EXECUTION_FIELDS.parentTask)
      .hget(record, EXECUTION_FIELDS.status)
      .exec())!;
    return { owner: String(replies[1]![1]), status: replies[2]![1] as string | null };
  }

  /** The parent that started this execution (`record`: its key), if a task did. */
  async parentOf(record: string): Promise<string | undefined> {
    return (await this.redis.hget(record, EXECUTION_FIELDS.parentExecution)) ?? undefined;
  }

  /** Whether any parent waits (one cheap read per poll when none does). */
  async any(): Promise<boolean> {
    return (await this.redis.hlen(this.keys.waiting)) > 0;
  }

  /** The waiting links, a page at a time (HSCAN: never the whole hash in one reply). */
  async *waiting(): AsyncGenerator<[string, ChildLink]> {
    let cursor = "0";
    do {
      const [next, flat] = await this.redis.hscan(this.keys.waiting, cursor, "COUNT", 200);
      cursor = next;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        yield [flat[i]!, JSON.parse(flat[i + 1]!) as ChildLink];
      }
    } while (cursor !== "0");
  }

  /** The parent no longer waits on this child. */
  async unlink(child: string): Promise<void> {
    await this.redis.hdel(this.keys.waiting, child);
  }
}
