import {
  EXECUTION_STATUSES,
  RuntimeError,
  type ExecutionStatus,
  type ExecutionSummary,
  type Page,
} from "../contract/index.js";
import { decodeCursor, encodeCursor } from "../store/canonical.js";
import { byName } from "../store/fields.js";
import type { Keys } from "../store/keys.js";
import type { RedisClient } from "../store/redis.js";
import { indexStatuses } from "../store/scripts/index-statuses.js";
import { matches, SUMMARY_FIELDS, SUMMARY_READ, toSummary } from "./execution-record.js";

/** What a listing may ask for (REST `GET /v1/executions`, AWS ListExecutions). */
export interface ExecutionListOptions {
  stateMachine?: string;
  pinnedVersion?: number;
  alias?: string;
  status?: ExecutionStatus;
  namePrefix?: string;
  error?: string;
  startedAfter?: number;
  startedBefore?: number;
  cursor?: string;
  limit?: number;
}

/**
 * Pages of executions from the per-status indexes (`keys.executionsByStatus`,
 * scored by start time): the listing half of the execution store.
 */
export class ExecutionList {
  constructor(
    private readonly client: RedisClient,
    private readonly keys: Keys,
  ) {}

  /**
   * A page of executions, newest first, read from the per-status indexes
   * (`keys.executionsByStatus`): with a status, its own; without, all of them
   * merged. Either way its cost is O(limit) whatever else the store holds.
   * Items carry no input or output. `startedAfter`/`startedBefore` (ms, from
   * inclusive, to exclusive) bound the indexes' scores, so a time range costs no
   * more; `namePrefix` is checked on the index members (`machine:name`) before
   * any record is read, and `error` on the summary row.
   */
  async page(options: ExecutionListOptions): Promise<Page<ExecutionSummary>> {
    const limit = Math.max(1, Math.min(options.limit ?? 100, 1000));
    await this.statusIndexReady();
    const indexes = (options.status ? [options.status] : EXECUTION_STATUSES).map((status) =>
      this.keys.executionsByStatus(status, options.stateMachine),
    );
    // Newest first (start time, then id, both descending). The cursor is the last
    // execution looked at, not a rank: executions started meanwhile do not shift pages.
    let after: { s: number; m: string } | undefined;
    if (options.cursor !== undefined) {
      const c = decodeCursor(options.cursor);
      if (!c || typeof c.s !== "number" || typeof c.m !== "string")
        throw new RuntimeError("InvalidCursor", "The cursor is not valid");
      after = { s: c.s, m: c.m };
    }
    const items: ExecutionSummary[] = [];
    const range = { from: options.startedAfter, to: options.startedBefore };
    const prefix = options.namePrefix;
    // A filter that skips most entries reads the indexes in larger slices.
    const filtered = prefix !== undefined || options.error !== undefined;
    for (;;) {
      const want = limit + 1 - items.length;
      const scanned = await this.olderThan(
        indexes,
        after,
        filtered ? Math.max(want, 500) : want,
        range,
      );
      if (scanned.length === 0) return { items };
      const batch: [string, number][] = [];
      for (const entry of scanned) {
        const name = entry[0].slice(entry[0].indexOf(":") + 1);
        if (prefix === undefined || name.startsWith(prefix)) batch.push(entry);
      }
      const last = scanned[scanned.length - 1]!;
      const pipeline = this.client.redis.pipeline();
      for (const [exec] of batch) pipeline.hmget(this.keys.execution(exec), ...SUMMARY_READ);
      const rows = batch.length === 0 ? [] : ((await pipeline.exec()) ?? []);
      for (let i = 0; i < batch.length; i++) {
        const [exec, score] = batch[i]!;
        const row = byName(SUMMARY_FIELDS, (rows[i]?.[1] as (string | null)[] | undefined) ?? []);
        // Past retention (expired, index entry not pruned yet), or not of the version,
        // alias or error asked: skipped.
        if (
          !row.status ||
          !matches(row, options) ||
          (options.error !== undefined && row.error !== options.error)
        ) {
          after = { s: score, m: exec };
          continue;
        }
        if (items.length === limit) return { items, nextCursor: encodeCursor(after!) };
        after = { s: score, m: exec };
        items.push(toSummary(row));
      }
      // Entries the name prefix left out are looked at too: the next slice starts after them.
      after = { s: last[1], m: last[0] };
    }
  }

  private statusIndex: Promise<void> | undefined;

  /** Indexes, once per deployment, the executions stored before the status indexes existed. */
  private statusIndexReady(): Promise<void> {
    this.statusIndex ??= (async () => {
      const redis = this.client.redis;
      if ((await redis.exists(this.keys.statusIndexBuilt)) === 1) return;
      const slice = 1000;
      for (let from = 0; ; from += slice) {
        const { seen } = await this.client.call(
          indexStatuses,
          { executions: this.keys.executions },
          { base: this.keys.base, from, count: slice },
        );
        if (seen < slice) break;
      }
      await redis.set(this.keys.statusIndexBuilt, "1");
    })().catch((err: unknown) => {
      this.statusIndex = undefined;
      throw err;
    });
    return this.statusIndex;
  }

  /**
   * Up to `count` entries of `indexes` after `after` in newest-first order, as
   * [exec, start ms]. The indexes are read in one MULTI: an execution that moves
   * from one status to another meanwhile is seen once, not twice or never.
   */
  private async olderThan(
    indexes: readonly string[],
    after: { s: number; m: string } | undefined,
    count: number,
    range: { from?: number | undefined; to?: number | undefined } = {},
  ): Promise<[string, number][]> {
    const read = this.client.redis.multi();
    const top =
      after !== undefined ? `(${after.s}` : range.to !== undefined ? `(${range.to}` : "+inf";
    const bottom = range.from ?? "-inf";
    for (const index of indexes) {
      // Entries with the cursor's own start time (few: one millisecond's starts)
      // are read whole and filtered by id; the older ones, `count` of them.
      if (after) read.zrangebyscore(index, after.s, after.s);
      read.zrevrangebyscore(index, top, bottom, "WITHSCORES", "LIMIT", 0, count);
    }
    const replies = ((await read.exec()) ?? []).map(([err, reply]) => {
      if (err) throw err;
      return reply as string[];
    });
    const entries: [string, number][] = [];
    for (let r = 0; r < replies.length; r++) {
      if (after) {
        // The ties: members only, all with the cursor's start time. Redis orders
        // equal scores by bytes (UTF-8), which JS string order is not.
        const cursor = Buffer.from(after.m);
        for (const exec of replies[r++]!) {
          if (Buffer.compare(Buffer.from(exec), cursor) < 0) entries.push([exec, after.s]);
        }
      }
      const flat = replies[r]!;
      for (let i = 0; i < flat.length; i += 2) entries.push([flat[i]!, Number(flat[i + 1])]);
    }
    return newestFirst(entries).slice(0, count);
  }
}

/**
 * Index entries in listing order: start time, then short id by bytes, both
 * descending (the order of each index read backwards), each execution once.
 */
function newestFirst(entries: [string, number][]): [string, number][] {
  const seen = new Set<string>();
  return entries
    .filter(([exec]) => !seen.has(exec) && seen.add(exec))
    .sort(([a, s], [b, t]) => t - s || Buffer.compare(Buffer.from(b), Buffer.from(a)));
}
