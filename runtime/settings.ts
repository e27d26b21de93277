import type { PayloadPolicy } from "../engine/core/payload-ref.js";
import { payloadPolicyFromEnv } from "./payload-refs.js";
import { shardsFromEnv, workerShardsFromEnv } from "./shards.js";
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
   * Whether approval changes go to the webhook outbox (runtime/approval-webhooks.ts):
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
}

function envNumber(name: string): number | undefined {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return undefined;
  const value = Number(raw);
  return Number.isFinite(value) && value > 0 ? value : undefined;
}

function optional<K extends string, V>(key: K, value: V | undefined): { [k in K]?: V } {
  return (value === undefined ? {} : { [key]: value }) as { [k in K]?: V };
}

function clusterFromEnv(): string[] | undefined {
  const raw = process.env.STEPWISE_REDIS_CLUSTER;
  if (raw === undefined || raw.trim() === "") return undefined;
  return raw
    .split(",")
    .map((node) => node.trim())
    .filter((node) => node !== "");
}

function historyCap(value: number): number {
  return value === 0 ? Infinity : Math.floor(value);
}

export function resolveSettings(options: Partial<RuntimeSettings> = {}): RuntimeSettings {
  return {
    redisUrl: options.redisUrl ?? process.env.REDIS_URL ?? "redis://127.0.0.1:6379",
    ...optional("redisCluster", options.redisCluster ?? clusterFromEnv()),
    ...optional("shards", options.shards ?? shardsFromEnv(process.env.STEPWISE_SHARDS)),
    ...optional(
      "workerShards",
      options.workerShards ?? workerShardsFromEnv(process.env.STEPWISE_WORKER_SHARDS),
    ),
    prefix: options.prefix ?? process.env.STEPWISE_PREFIX ?? "stepwise",
    leaseMs: options.leaseMs ?? envNumber("STEPWISE_LEASE_MS") ?? 10_000,
    lockDurationMs: options.lockDurationMs ?? envNumber("STEPWISE_LOCK_MS") ?? 3_000,
    stalledIntervalMs: options.stalledIntervalMs ?? envNumber("STEPWISE_STALLED_MS") ?? 1_000,
    tombstoneTtlSeconds: options.tombstoneTtlSeconds ?? 7 * 24 * 3600,
    timerPollMs: options.timerPollMs ?? envNumber("STEPWISE_TIMER_POLL_MS") ?? 20,
    retentionSeconds:
      options.retentionSeconds ??
      (process.env.STEPWISE_RETENTION_DAYS === "0"
        ? 0
        : Math.round((envNumber("STEPWISE_RETENTION_DAYS") ?? 90) * 86_400)),
    approvalEvents: options.approvalEvents ?? Boolean(process.env.STEPWISE_APPROVAL_WEBHOOK),
    maxHistoryEvents: historyCap(
      options.maxHistoryEvents ??
        (process.env.STEPWISE_MAX_HISTORY_EVENTS === "0"
          ? 0
          : (envNumber("STEPWISE_MAX_HISTORY_EVENTS") ?? 25_000)),
    ),
    ...(() => {
      const payloads = "payloads" in options ? options.payloads : payloadPolicyFromEnv();
      return payloads ? { payloads } : {};
    })(),
    chain: options.chain ?? {
      transitions: Math.floor(envNumber("STEPWISE_CHAIN_TRANSITIONS") ?? 100),
      ms: envNumber("STEPWISE_CHAIN_MS") ?? 10,
    },
  };
}
