import type { Redis } from "ioredis";
import type { ApprovalChange } from "../contract/index.js";
import { readRecord } from "./approval-record.js";
import type { Keys } from "../store/keys.js";
import { openRedis, type RedisClient, type RedisTarget } from "../store/redis.js";

/**
 * Approval changes as they are committed, for live clients (`GET /v1/approvals/events`).
 *
 * Every script that creates or changes an approval appends `{e, id}` to the capped
 * stream `apfeed` in the same commit (store/lua/approval.ts). One blocking
 * XREAD loop per runtime, on its own connection (a blocked connection can do
 * nothing else), reads it while anyone follows and fans each change out; the
 * record is read once per change, however many follow. A follower that resumes
 * (`Last-Event-ID`) first reads what it missed with XRANGE, then takes the live
 * changes after the last one it saw, so nothing is sent twice or skipped.
 *
 * What the feed's cap (about 10,000 changes) has dropped cannot be resumed: a
 * client that was away that long reads the inbox again.
 */
export class ApprovalFeed {
  private readonly followers = new Set<Follower>();
  private reader: Redis | undefined;
  private loop: Promise<void> | undefined;
  private closed = false;

  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
    private readonly target: RedisTarget,
    /** How long one XREAD blocks (ms): a loop with no followers left ends within it. */
    private readonly blockMs = 2_000,
  ) {}

  /** Changes after `afterId` (an id this feed gave; none: from now on) until `signal` aborts. */
  async *follow(afterId: string | undefined, signal: AbortSignal): AsyncGenerator<ApprovalChange> {
    const follower = new Follower();
    // Registered before the catch-up read: a change committed in between is
    // queued live and dropped below as already seen, never lost.
    this.followers.add(follower);
    this.start();
    const wake = (): void => follower.wake();
    signal.addEventListener("abort", wake);
    try {
      let last = afterId !== undefined && isStreamId(afterId) ? afterId : undefined;
      if (last !== undefined) {
        for (;;) {
          const missed = await this.range(`(${last}`, 500);
          for (const change of missed) {
            if (signal.aborted) return;
            last = change.id;
            yield change;
          }
          if (missed.length < 500) break;
        }
      }
      while (!signal.aborted && !this.closed) {
        const change = follower.queue.shift();
        if (!change) {
          await follower.next();
          continue;
        }
        if (last !== undefined && compareIds(change.id, last) <= 0) continue;
        last = change.id;
        yield change;
      }
    } finally {
      signal.removeEventListener("abort", wake);
      this.followers.delete(follower);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    this.reader?.disconnect();
    for (const follower of this.followers) follower.wake();
    await this.loop;
  }

  private start(): void {
    if (this.loop || this.closed) return;
    this.loop = this.read().finally(() => {
      this.loop = undefined;
      // A follower that came while the loop was ending needs a new one.
      if (this.followers.size > 0 && !this.closed) this.start();
    });
  }

  private async read(): Promise<void> {
    this.reader ??= openRedis(this.target, "stepwise-approval-feed", { lazyConnect: true });
    this.reader.on("error", () => {});
    // `$` would miss what is added between two reads; start from the newest id now.
    let last = await this.newestId();
    while (this.followers.size > 0 && !this.closed) {
      let reply: [string, [string, string[]][]][] | null;
      try {
        reply = (await this.reader.xread(
          "COUNT",
          500,
          "BLOCK",
          this.blockMs,
          "STREAMS",
          this.keys.approvalFeed,
          last,
        )) as [string, [string, string[]][]][] | null;
      } catch {
        if (this.closed) return;
        await new Promise((resolve) => setTimeout(resolve, 500));
        continue;
      }
      const entries = reply?.[0]?.[1] ?? [];
      if (entries.length === 0) continue;
      last = entries[entries.length - 1]![0];
      const changes = await this.resolve(entries);
      for (const follower of this.followers) {
        follower.queue.push(...changes);
        follower.wake();
      }
    }
  }

  /** The id of the newest change kept (`0-0` when there is none). */
  async newestId(): Promise<string> {
    const newest = (await this.client.redis.xrevrange(
      this.keys.approvalFeed,
      "+",
      "-",
      "COUNT",
      1,
    )) as [string, string[]][];
    return newest[0]?.[0] ?? "0-0";
  }

  private async range(from: string, count: number): Promise<ApprovalChange[]> {
    const entries = (await this.client.redis.xrange(
      this.keys.approvalFeed,
      from,
      "+",
      "COUNT",
      count,
    )) as [string, string[]][];
    return this.resolve(entries);
  }

  /** Each entry with the record as it is now (a record past its retention is left out). */
  private async resolve(entries: [string, string[]][]): Promise<ApprovalChange[]> {
    if (entries.length === 0) return [];
    const fields = entries.map(([, flat]) => {
      const f: Record<string, string> = {};
      for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
      return f;
    });
    const pipeline = this.client.redis.pipeline();
    for (const f of fields) pipeline.hgetall(this.keys.approval(f.id ?? ""));
    const records = (await pipeline.exec()) ?? [];
    const changes: ApprovalChange[] = [];
    entries.forEach(([id], i) => {
      const stored = readRecord((records[i]?.[1] ?? {}) as Record<string, string>);
      if (stored)
        changes.push({ id, event: fields[i]!.e ?? "approval.changed", approval: stored.record });
    });
    return changes;
  }
}

class Follower {
  readonly queue: ApprovalChange[] = [];
  private waiting: (() => void) | undefined;

  next(): Promise<void> {
    return new Promise((resolve) => (this.waiting = resolve));
  }

  wake(): void {
    const waiting = this.waiting;
    this.waiting = undefined;
    waiting?.();
  }
}

const STREAM_ID = /^\d{1,20}-\d{1,20}$/;

function isStreamId(text: string): boolean {
  return STREAM_ID.test(text);
}

function compareIds(a: string, b: string): number {
  const [am, as] = a.split("-").map(BigInt) as [bigint, bigint];
  const [bm, bs] = b.split("-").map(BigInt) as [bigint, bigint];
  return am === bm ? (as === bs ? 0 : as < bs ? -1 : 1) : am < bm ? -1 : 1;
}
