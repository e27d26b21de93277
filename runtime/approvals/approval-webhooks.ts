import { createHmac } from "node:crypto";
import type { Redis } from "ioredis";
import { UnrecoverableError, Queue, Worker, type Job } from "bullmq";
import type { ApprovalRecord } from "./approval-record.js";
import { readRecord } from "./approval-record.js";
import { DEFAULT_EGRESS, type EgressPolicy } from "../../task-runners/egress.js";
import { EgressRefused, outbound } from "../../task-runners/outbound.js";
import { makeKeys, type Keys } from "../store/keys.js";
import { bullConnection, type RedisTarget } from "../store/redis.js";
import { resolveShardCount, ShardLayout } from "../shards/shards.js";

/**
 * Approval webhooks (`STEPWISE_APPROVAL_WEBHOOK`). The scripts that create,
 * decide, expire or cancel an approval append `{e, id}` to the outbox stream
 * `apev` in the same atomic commit (store/lua/approval.ts), so an event is
 * never lost between a commit and a send. This relay moves each outbox entry
 * into a BullMQ job (job id = the entry id: moving it twice after a crash makes
 * one job) and acknowledges it; the job POSTs `{event, approval}` signed as
 * Stripe signs (`Stepwise-Signature: t=<unix>,v1=<hex HMAC-SHA256 of "t.body">`)
 * and retries with exponential backoff for 24 hours. Nothing here is on an
 * execution's path: a slow or dead receiver delays only its own notifications.
 *
 * Sends go through the egress policy like HTTP tasks (a receiver on a private
 * address needs `STEPWISE_EGRESS_ALLOW`), follow no redirect, and read at most
 * 64 KiB of the answer, which only its status matters for.
 *
 * `approval` is the record when the event is sent (a `created` sent after a
 * quick decision already shows it); `event` says what happened (`approval.created`,
 * `approval.decided`, …, and for human tasks `approval.claimed`, `approval.released`,
 * `approval.delegated`, `approval.commented`, `approval.reminder`, `approval.escalated`);
 * `link` is the approval's console page (`/console/approvals/:id`) relative to the service.
 */
export interface ApprovalWebhookOptions extends RedisTarget {
  prefix: string;
  /** The deployment's shard count, when the process was told one (STEPWISE_SHARDS). */
  shards?: number;
  url: string;
  secret: string;
  /** First retry delay (ms), doubling up to an hour (default 1 s). */
  retryBaseMs?: number;
  /** How long a notification is retried (default 24 h). */
  retryForMs?: number;
  /** Per-request timeout (default 10 s). */
  timeoutMs?: number;
  /** Which addresses the receiver may have (default: `STEPWISE_EGRESS_ALLOW`). */
  egress?: EgressPolicy;
  onError?: (err: unknown) => void;
}

/** The running relay (one per shard's outbox) and its sender; `close` stops both. */
export interface ApprovalWebhookRelay {
  close(): Promise<void>;
}

const QUEUE = "approval-webhooks";
const GROUP = "webhooks";
/** An entry a relay took and did not acknowledge for this long is taken over (its relay died). */
const CLAIM_IDLE_MS = 30_000;

interface WebhookJob {
  event: string;
  approvalId: string;
  /** The shard whose outbox the event came from, which holds the approval. */
  shard?: number;
}

/** An outbox entry as Redis streams answer it: its id and its fields, flat. */
type OutboxEntry = [id: string, flat: string[]];

/** `t=<unix seconds>,v1=<hex HMAC-SHA256(secret, "<t>.<body>")>`. */
export function signature(secret: string, body: string, unixSeconds: number): string {
  const mac = createHmac("sha256", secret).update(`${unixSeconds}.${body}`).digest("hex");
  return `t=${unixSeconds},v1=${mac}`;
}

/**
 * Starts the relay of every shard's outbox into the webhook queue, and the worker
 * that sends the queue's jobs to `options.url`.
 */
export async function startApprovalWebhookRelay(
  options: ApprovalWebhookOptions,
): Promise<ApprovalWebhookRelay> {
  // Each shard has its outbox (approvals live with their executions); the jobs go to one queue.
  const control = makeKeys(options.prefix);
  const onError = options.onError ?? ((err: unknown) => console.error("approval webhook:", err));
  // The relay blocks on its stream read; the sender reads records on its own connection.
  const reader = bullConnection(options, "stepwise-approval-reader");
  const layout = new ShardLayout(
    options.prefix,
    await resolveShardCount(reader, control, options.shards),
  );
  const queueConnection = bullConnection(options, "stepwise-approval-webhooks");
  const queue = new Queue<WebhookJob>(QUEUE, {
    connection: queueConnection,
    prefix: control.bullPrefix,
    streams: { events: { maxLen: 0 } },
  });
  await createGroups(reader, layout);
  const worker = webhookSender(options, control, layout, reader, onError);
  const relay = { stopped: false };
  const consumer = `relay-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  const loop = Promise.all(
    layout.shards.map((keys) =>
      relayOutbox(options, keys, layout, queue, consumer, relay, onError),
    ),
  );
  await worker.waitUntilReady();
  return {
    async close() {
      relay.stopped = true;
      await loop;
      await worker.close();
      await queue.close();
      (worker.opts.connection as { disconnect?: () => void }).disconnect?.();
      queueConnection.disconnect();
      reader.disconnect();
    },
  };
}

/** The relays' consumer group on every shard's outbox (made with the stream if need be). */
async function createGroups(reader: Redis, layout: ShardLayout): Promise<void> {
  for (const keys of layout.shards) {
    try {
      await reader.xgroup("CREATE", keys.approvalEvents, GROUP, "0", "MKSTREAM");
    } catch (err) {
      if (!String(err).includes("BUSYGROUP")) throw err;
    }
  }
}

/** The worker that POSTs each job's event with the approval's record, retried with backoff. */
function webhookSender(
  options: ApprovalWebhookOptions,
  control: Keys,
  layout: ShardLayout,
  reader: Redis,
  onError: (err: unknown) => void,
): Worker<WebhookJob> {
  const base = options.retryBaseMs ?? 1000;
  const deliver = deliverer(options, control, layout, reader, onError);
  const worker = new Worker<WebhookJob>(QUEUE, deliver, {
    connection: bullConnection(options, "stepwise-approval-webhook-worker"),
    prefix: control.bullPrefix,
    concurrency: 8,
    settings: {
      backoffStrategy: (attemptsMade: number) =>
        Math.min(base * 2 ** Math.max(0, attemptsMade - 1), 3600_000),
    },
  });
  worker.on("error", onError);
  return worker;
}

/** Sends one job: the approval as it is now, signed; a refusal by the egress policy is final. */
function deliverer(
  options: ApprovalWebhookOptions,
  control: Keys,
  layout: ShardLayout,
  reader: Redis,
  onError: (err: unknown) => void,
): (job: Job<WebhookJob>) => Promise<void> {
  const retryFor = options.retryForMs ?? 24 * 3600_000;
  const send = outbound({
    policy: options.egress ?? DEFAULT_EGRESS,
    maxResponseBytes: 64 * 1024,
  });
  const refused = refusals(options.url, onError);
  return async (job) => {
    if (Date.now() - job.timestamp > retryFor) {
      throw new UnrecoverableError(`gave up after ${retryFor} ms: ${job.data.event}`);
    }
    const keys = layout.shards[job.data.shard ?? 0] ?? control;
    const fields = await reader.hgetall(keys.approval(job.data.approvalId));
    const approval: ApprovalRecord | undefined = readRecord(fields)?.record;
    if (!approval) return; // past retention: nothing left to tell
    // `link`: the approval's own console page, relative to the service's address.
    const link = `/console/approvals/${approval.approvalId}`;
    const body = JSON.stringify({ event: job.data.event, approval, link });
    let response;
    try {
      response = await send({
        url: new URL(options.url),
        method: "POST",
        headers: {
          "content-type": "application/json",
          "stepwise-signature": signature(options.secret, body, Math.floor(Date.now() / 1000)),
          "stepwise-event-id": job.id ?? "",
        },
        body,
        signal: AbortSignal.timeout(options.timeoutMs ?? 10_000),
        maxRedirects: 0,
      });
    } catch (err) {
      // Refused before connecting, or while resolving inside fetch (then it is the cause).
      const cause = (err as { cause?: unknown }).cause;
      if (err instanceof EgressRefused) refused(job, err);
      if (cause instanceof EgressRefused) refused(job, cause);
      throw err;
    }
    if (response.status < 200 || response.status > 299) {
      throw new Error(`${options.url} answered ${response.status}`);
    }
  };
}

/**
 * Approvals whose webhook the egress policy refused: told once each, since every
 * later event of the same approval is refused for the same reason (bounded memory).
 * The job fails for good: a policy does not change between attempts.
 */
function refusals(
  url: string,
  onError: (err: unknown) => void,
): (job: Job<WebhookJob>, err: EgressRefused) => never {
  const refusedFor = new Set<string>();
  return (job, err) => {
    if (!refusedFor.has(job.data.approvalId)) {
      if (refusedFor.size >= 1000) refusedFor.clear();
      refusedFor.add(job.data.approvalId);
      onError(
        new Error(
          `approval ${job.data.approvalId}: ${job.data.event} not sent to ${url}: ${err.message} (STEPWISE_EGRESS_ALLOW opens it); not retried`,
        ),
      );
    }
    // A policy does not change between attempts: retrying would only repeat the refusal.
    throw new UnrecoverableError(err.message);
  };
}

/** Moves one shard's outbox into jobs, blocking on its own connection, until `relay.stopped`. */
async function relayOutbox(
  options: ApprovalWebhookOptions,
  keys: Keys,
  layout: ShardLayout,
  queue: Queue<WebhookJob>,
  consumer: string,
  relay: { stopped: boolean },
  onError: (err: unknown) => void,
): Promise<void> {
  const redis = bullConnection(options, "stepwise-approval-outbox");
  while (!relay.stopped) {
    try {
      const entries = await takeEntries(redis, keys, consumer);
      if (entries.length === 0) continue;
      await queue.addBulk(entries.map((entry) => webhookJob(entry, keys, layout)));
      const ids = entries.map(([id]) => id);
      await redis.xack(keys.approvalEvents, GROUP, ...ids);
      await redis.xdel(keys.approvalEvents, ...ids);
    } catch (err) {
      if (relay.stopped) break;
      onError(err);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
  redis.disconnect();
}

/** The entries a dead relay left unacknowledged, then new ones (waiting up to 200 ms). */
async function takeEntries(redis: Redis, keys: Keys, consumer: string): Promise<OutboxEntry[]> {
  const [, claimed] = (await redis.xautoclaim(
    keys.approvalEvents,
    GROUP,
    consumer,
    CLAIM_IDLE_MS,
    "0",
    "COUNT",
    100,
  )) as [string, OutboxEntry[]];
  const mine = (await redis.xreadgroup(
    "GROUP",
    GROUP,
    consumer,
    "COUNT",
    100,
    "BLOCK",
    200,
    "STREAMS",
    keys.approvalEvents,
    ">",
  )) as [string, OutboxEntry[]][] | null;
  return [...claimed, ...(mine?.[0]?.[1] ?? [])];
}

/** The webhook job of an outbox entry, its id made from the entry's. */
function webhookJob([id, flat]: OutboxEntry, keys: Keys, layout: ShardLayout) {
  const f: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) f[flat[i]!] = flat[i + 1]!;
  return {
    name: f.e ?? "approval.changed",
    data: {
      event: f.e ?? "approval.changed",
      approvalId: f.id ?? "",
      shard: keys.shard,
    },
    opts: {
      jobId: layout.count === 1 ? `apev-${id}` : `apev-${keys.shard}-${id}`,
      attempts: 64,
      backoff: { type: "custom" },
      // Kept a day after it is sent, so an entry moved twice still makes one job.
      removeOnComplete: { age: 24 * 3600 },
      removeOnFail: { age: 24 * 3600 },
    },
  };
}
