import type { PayloadPolicy } from "../engine/core/payload-ref.js";
/**
 * Tunables of the Redis runtime. Defaults suit production; tests shorten the
 * lease and lock so that crash recovery takes a second instead of half a minute.
 */
export interface RuntimeSettings {
  redisUrl: string;
  /** `STEPWISE_REDIS_CLUSTER`: seed nodes (`host:port`) of a Redis Cluster, used instead of `redisUrl`. */
  redisCluster?: string[];
  /**
   * `STEPWISE_SHARDS`: the shard count a new deployment is created with (shards.ts;
   * default 16). Unset, a process takes the deployment's; set, it must agree.
   */
  shards?: number;
  /** `STEPWISE_WORKER_SHARDS`: the shards a worker serves (default: all). */
  workerShards?: number[];
  /** Key prefix (default `stepwise`); see keys.ts. */
  prefix: string;
  /**
   * How long a run with pending events (or a task call) may go without its job
   * being seen before the scheduler enqueues it again. Covers a process dying
   * between a commit and its enqueue. Re-enqueueing is harmless, so shorter only
   * costs a little Redis work.
   */
  leaseMs: number;
  /**
   * BullMQ job lock: a worker that dies holding a job gives it back after this.
   * A live worker renews it every half of it, so the cost of a short lock is one
   * small Redis write per job in flight per half-period; the risk is an event loop
   * blocked longer than the lock, whose job is then run twice (harmless for
   * transitions, fenced by seq; a task call repeats with its idempotency key).
   * 3 s + the 1 s stalled check: a killed worker's jobs move on within ~4 s
   * (bench/worker-recovery.ts); it was 30 s + 15 s.
   */
  lockDurationMs: number;
  /** How often BullMQ looks for jobs whose lock expired. */
  stalledIntervalMs: number;
  /** How long an answered or cancelled task token keeps answering TaskTimedOut/TaskDoesNotExist. */
  tombstoneTtlSeconds: number;
  /** Timer poll interval: bounds timer lateness. */
  timerPollMs: number;
  /**
   * How far one job may go on with the same run's next transitions (see
   * "Chaining" in transition.ts): at most this many transitions, for at most
   * this long, so a long chain cannot hold a worker slot from other executions.
   */
  chain: { transitions: number; ms: number };
  /**
   * How long an ended execution (record, history, journal, runs) stays readable,
   * in seconds; 0 keeps everything forever. AWS keeps closed executions 90 days.
   */
  retentionSeconds: number;
  /**
   * Whether approval changes go to the webhook outbox (runtime/approvals/approval-webhooks.ts):
   * on when `STEPWISE_APPROVAL_WEBHOOK` is set, so nothing piles up when nobody listens.
   */
  approvalEvents: boolean;
  /**
   * Most history events an execution may have (AWS's hard quota: 25,000); past it
   * the execution fails with States.Runtime (history-cap.ts). 0 (setting or env)
   * means no cap: wide inline Maps past AWS's quota, at the cost of unbounded loops.
   */
  maxHistoryEvents: number;
  /**
   * Results and outputs past a size go by reference (engine/core/payload-ref.ts):
   * set by STEPWISE_PAYLOAD_STORE=redis; unset, they fail as on AWS.
   */
  payloads?: PayloadPolicy;
  /**
   * Export spans over OTLP/HTTP (`OTEL_EXPORTER_OTLP_ENDPOINT`): the exporter reads
   * its standard variables itself. Off: no span is made and the SDK is not loaded.
   */
  otlp: boolean;
  /** `STEPWISE_AUDIT_KEY`: the PEM file of the key that signs audit exports. */
  auditKeyFile?: string;
  /**
   * Commands fail at once while Redis cannot be reached, instead of waiting for it
   * (redis.ts FAIL_FAST): for the API's runtime, whose callers get 503 meanwhile.
   */
  failFast: boolean;
  /** `STEPWISE_EVENT_RETENTION_HOURS`: how long bus events are kept, in seconds (runtime/triggers/; default 24 h). */
  eventRetentionSeconds?: number;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [k in K]?: V };
}

function historyCap(value: number): number {
  return value === 0 ? Infinity : Math.floor(value);
}

/**
 * A worker's defaults, the same for `stepwise serve`, `stepwise worker` and a
 * worker built in-process (config/ reads the variables that change them).
 */
export const WORKER_DEFAULTS = {
  /** Transition jobs at once on each shard served (`STEPWISE_CONCURRENCY`). */
  concurrency: 16,
  /** Task calls in flight that a worker's own commits hand it (`STEPWISE_TASK_CONCURRENCY`). */
  taskConcurrency: 64,
  /** The least number of in-process advances at once per shard (`STEPWISE_FIRE_CONCURRENCY`). */
  minFireConcurrency: 64,
} as const;

/**
 * The settings with their defaults filled in. Nothing here reads the environment:
 * config/ turns variables into `options` (`stepwise serve`, `stepwise worker`), and
 * code that builds a runtime in-process says what it wants.
 */
export function resolveSettings(options: Partial<RuntimeSettings> = {}): RuntimeSettings {
  return {
    redisUrl: options.redisUrl ?? "redis://127.0.0.1:6379",
    ...optional("redisCluster", options.redisCluster),
    ...optional("shards", options.shards),
    ...optional("workerShards", options.workerShards),
    prefix: options.prefix ?? "stepwise",
    leaseMs: options.leaseMs ?? 10_000,
    lockDurationMs: options.lockDurationMs ?? 3_000,
    stalledIntervalMs: options.stalledIntervalMs ?? 1_000,
    tombstoneTtlSeconds: options.tombstoneTtlSeconds ?? 7 * 24 * 3600,
    timerPollMs: options.timerPollMs ?? 20,
    retentionSeconds: options.retentionSeconds ?? 90 * 86_400,
    approvalEvents: options.approvalEvents ?? false,
    maxHistoryEvents: historyCap(options.maxHistoryEvents ?? 25_000),
    ...optional("payloads", options.payloads),
    chain: options.chain ?? { transitions: 100, ms: 10 },
    otlp: options.otlp ?? false,
    failFast: options.failFast ?? false,
    ...optional("auditKeyFile", options.auditKeyFile),
    ...optional("eventRetentionSeconds", options.eventRetentionSeconds),
  };
}
