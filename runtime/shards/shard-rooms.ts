import type { ApprovalFeed } from "../approvals/approval-feed.js";
import type { ApprovalStore } from "../approvals/approval-store.js";
import { encodeCursor } from "../store/canonical.js";
import {
  type ApprovalChange,
  type ApprovalRecord,
  type ExecutionResult,
  type ExecutionSummary,
  type Page,
  type RuntimeMetrics,
} from "../contract/index.js";
import type { ExecutionStore } from "../executions/execution-store.js";
import type { HistoryFeed } from "../executions/history-feed.js";
import { EXECUTION_ARN_PREFIX, shortId } from "../store/ids.js";
import type { Keys } from "../store/keys.js";
import type { Pauses } from "../executions/pause.js";
import type { ExecutionCache } from "../commit/execution-cache.js";
import type { JobQueues } from "../worker/queues.js";
import type { ShardLayout } from "./shards.js";
import type { TransitionDeps } from "../commit/transition.js";
import type { ActivityWakeups } from "../executions/activity-wakeups.js";
import type { EndWaiters } from "../executions/waiters.js";
import type { LoadSnapshot } from "../store/scripts/load-transition.js";

/**
 * What the runtime (runtime.ts) holds per shard, over its shared connections, and
 * how answers that span shards are put together: listings merged by their keyset
 * order, metrics summed, approval feeds interleaved with one resumable id.
 */
export interface ShardRoom {
  keys: Keys;
  queues: JobQueues;
  executions: ExecutionStore;
  deps: TransitionDeps;
  approvals: ApprovalStore;
  historyFeed: HistoryFeed;
  pauses: Pauses;
  approvalFeed: ApprovalFeed;
}

export interface Sharded {
  layout: ShardLayout;
  rooms: ShardRoom[];
  /** One program cache for every shard: programs are the state machines'. */
  cache: ExecutionCache;
  /** One subscriber for every shard's `ended` channel. */
  waiters: EndWaiters;
  /** Long polls of activities, woken when a task is added (activity-wakeups.ts). */
  activities: ActivityWakeups;
}

/** A worker in this process (worker/worker.ts `StepwiseWorker`). */
export interface StartAdvancer {
  /** Advances `<run>@<seq>` of a shard it serves when it has room (from `snapshot`). */
  advanceHere(shard: number, run: string, seq: number, snapshot?: LoadSnapshot): boolean;
  /** Tells `listener` of the ends its commits write. */
  tellEnds(listener: (executionId: string, result: ExecutionResult) => void): void;
}

/**
 * `serve`: new executions of the shards `worker` serves in this process are advanced
 * by it at once, from the snapshot their start's script answered, instead of through
 * the queue (ExecutionStore.start); the ends it commits answer this process's
 * waiters without a read (executions/waiters.ts `endedHere`).
 */
export function advanceStartsIn(
  { rooms, waiters }: Pick<Sharded, "rooms" | "waiters">,
  worker: StartAdvancer,
): void {
  for (const room of rooms) {
    const shard = room.keys.shard;
    room.executions.advanceHere = (run, seq, snapshot) =>
      worker.advanceHere(shard, run, seq, snapshot);
  }
  worker.tellEnds((executionId, result) => waiters.endedHere(executionId, result));
}

/** The short id of an execution ARN; anything else as it is (its lookup answers 404). */
export function shortIdOrSelf(executionId: string): string {
  return executionId.startsWith(EXECUTION_ARN_PREFIX) ? shortId(executionId) : executionId;
}

/**
 * One page of executions from each shard's page, each read with the same keyset
 * cursor: newest first (start time, then short id by bytes, both descending, the
 * order of every index). The cursor of the merged page is its last item, so the
 * next page asks each shard for what comes after it, and nothing is skipped.
 */
export function mergePages(
  pages: Page<ExecutionSummary>[],
  limit: number | undefined,
): Page<ExecutionSummary> {
  if (pages.length === 1) return pages[0]!;
  return merge(pages, limit, (item) => ({
    s: Date.parse(item.startedAt),
    m: shortId(item.executionId),
  }));
}

/** The same for approval inbox pages (created time, then approval id). */
export function mergeApprovalPages(
  pages: Page<ApprovalRecord>[],
  limit: number | undefined,
): Page<ApprovalRecord> {
  if (pages.length === 1) return pages[0]!;
  return merge(pages, limit, (item) => ({
    k: "ap",
    s: Date.parse(item.createdAt),
    m: item.approvalId,
  }));
}

function merge<T>(
  pages: Page<T>[],
  limit: number | undefined,
  position: (item: T) => { s: number; m: string; k?: string },
): Page<T> {
  const size = Math.max(1, Math.min(limit ?? 100, 1000));
  const all = pages
    .flatMap((page) => page.items.map((item) => ({ item, at: position(item) })))
    .sort((a, b) => b.at.s - a.at.s || Buffer.compare(Buffer.from(b.at.m), Buffer.from(a.at.m)));
  const items = all.slice(0, size);
  const more = all.length > size || pages.some((page) => page.nextCursor !== undefined);
  const last = items[items.length - 1];
  return more && last
    ? { items: items.map((x) => x.item), nextCursor: encodeCursor(last.at) }
    : { items: items.map((x) => x.item) };
}

/** Every shard's figures added up. */
export function sumMetrics(
  figures: Omit<RuntimeMetrics, "executionsStartedTotal">[],
): Omit<RuntimeMetrics, "executionsStartedTotal"> {
  const sum: Required<Omit<RuntimeMetrics, "executionsStartedTotal">> = {
    executionsByStatus: {},
    queueDepth: {},
    pendingTimers: 0,
    pendingTaskTokens: 0,
    executionsGivenUpTotal: 0,
  };
  for (const f of figures) {
    for (const [status, n] of Object.entries(f.executionsByStatus ?? {}))
      sum.executionsByStatus[status as keyof typeof sum.executionsByStatus] =
        (sum.executionsByStatus[status as keyof typeof sum.executionsByStatus] ?? 0) + n;
    for (const [queue, states] of Object.entries(f.queueDepth ?? {})) {
      const into = (sum.queueDepth[queue] ??= {});
      for (const [state, n] of Object.entries(states)) into[state] = (into[state] ?? 0) + n;
    }
    sum.pendingTimers += f.pendingTimers ?? 0;
    sum.pendingTaskTokens += f.pendingTaskTokens ?? 0;
    sum.executionsGivenUpTotal += f.executionsGivenUpTotal ?? 0;
  }
  return sum;
}

/**
 * The approval changes of every shard as one feed. With one shard its ids are the
 * stream's own. With several, an id carries every shard's position (`<id0>_<id1>_…`),
 * so `Last-Event-ID` resumes each shard
 * where the client left it; the changes of different shards interleave in the
 * order they arrive, which is all a client can rely on across shards.
 */
export async function* followShards(
  feeds: readonly ApprovalFeed[],
  afterId: string | undefined,
  signal: AbortSignal,
): AsyncGenerator<ApprovalChange> {
  if (feeds.length === 1) {
    yield* feeds[0]!.follow(afterId, signal);
    return;
  }
  // A shard the client has no position in starts at its newest change now, so the
  // ids given from here on resume every shard without a gap.
  const given = parsePositions(afterId, feeds.length);
  const positions = await Promise.all(
    feeds.map(async (feed, i) => given[i] ?? (await feed.newestId())),
  );
  const queue: { shard: number; change: ApprovalChange }[] = [];
  let wake: (() => void) | undefined;
  let done = false;
  let failure: unknown;
  const followers = feeds.map(async (feed, shard) => {
    for await (const change of feed.follow(positions[shard], signal)) {
      queue.push({ shard, change });
      wake?.();
    }
  });
  const finish = (err?: unknown): void => {
    failure = err;
    done = true;
    wake?.();
  };
  Promise.all(followers).then(() => finish(), finish);
  while (!signal.aborted) {
    const next = queue.shift();
    if (next) {
      positions[next.shard] = next.change.id;
      yield { ...next.change, id: positions.join("_") };
      continue;
    }
    if (failure !== undefined) throw failure;
    if (done) return;
    await new Promise<void>((resolve) => (wake = resolve));
    wake = undefined;
  }
}

/** An id this feed gave, per shard; anything else follows from now on, as one shard's feed does. */
function parsePositions(afterId: string | undefined, count: number): (string | undefined)[] {
  const parts = afterId?.split("_") ?? [];
  const valid = parts.length === count && parts.every((p) => /^\d{1,20}-\d{1,20}$/.test(p));
  return Array.from({ length: count }, (_, i) => (valid ? parts[i] : undefined));
}
