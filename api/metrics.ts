import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";
import { EXECUTION_STATUSES, type RuntimeMetrics } from "../runtime/contract/index.js";
import { LATENCY_BUCKETS } from "../runtime/worker/worker-metrics.js";

/**
 * Prometheus metrics with prom-client, in a registry per server (never prom-client's
 * global one): two servers in one process (tests, embedding) keep apart, and
 * `stepwise serve` hands the API the registry its worker counts into, so one scrape
 * shows both.
 *
 * The runtime contributes what only it knows through `MetricsSource` — a small,
 * optional interface so the API stays decoupled from how the runtime counts. A
 * runtime that offers `metrics()` gets its figures exported; one that does not
 * simply has those series missing.
 */
export interface MetricsSource {
  metrics(): Promise<RuntimeMetrics>;
}

export function isMetricsSource(value: unknown): value is MetricsSource {
  return (
    typeof value === "object" &&
    value !== null &&
    typeof (value as { metrics?: unknown }).metrics === "function"
  );
}

/** A registry with the process's default series (CPU, memory, event loop lag, GC, handles). */
export function createRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

/** HTTP series of this process, by route pattern (never the raw URL: bounded cardinality). */
export class HttpMetrics {
  private readonly requests: Counter<"method" | "route" | "status">;
  private readonly durations: Histogram<"method" | "route">;

  constructor(registry: Registry) {
    this.requests = new Counter({
      name: "stepwise_http_requests_total",
      help: "HTTP requests answered, by route and status.",
      labelNames: ["method", "route", "status"],
      registers: [registry],
    });
    this.durations = new Histogram({
      name: "stepwise_http_request_duration_seconds",
      help: "HTTP request duration, by route.",
      labelNames: ["method", "route"],
      buckets: LATENCY_BUCKETS,
      registers: [registry],
    });
  }

  record(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.durations.observe({ method, route }, seconds);
  }
}

const STATUSES = EXECUTION_STATUSES;

/**
 * The runtime's series, read from `source` when scraped. prom-client asks every
 * series for its value at once; they share one read of the runtime, so a scrape
 * costs one `metrics()` call. A runtime that fails to report must not fail the
 * scrape: its series are left out and `stepwise_runtime_metrics_up` says 0.
 */
export function registerRuntimeMetrics(
  registry: Registry,
  source: MetricsSource | undefined,
  onError: (err: unknown) => void,
): void {
  let reading: Promise<RuntimeMetrics | undefined> | undefined;
  const read = (): Promise<RuntimeMetrics | undefined> => {
    if (!source) return Promise.resolve(undefined);
    reading ??= source
      .metrics()
      .catch((err: unknown) => {
        onError(err);
        return undefined;
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };

  new Gauge({
    name: "stepwise_runtime_metrics_up",
    help: "1 when the runtime reported its metrics.",
    registers: [registry],
    async collect() {
      this.set((await read()) ? 1 : 0);
    },
  });
  new Gauge({
    name: "stepwise_executions",
    help: "RUNNING: executions running now; other statuses: executions that ended with it (counted when they end).",
    labelNames: ["status"],
    registers: [registry],
    async collect() {
      this.reset();
      const byStatus = (await read())?.executionsByStatus;
      if (!byStatus) return;
      for (const status of STATUSES) this.set({ status }, byStatus[status] ?? 0);
    },
  });
  new Counter({
    name: "stepwise_executions_started_total",
    help: "Executions started by this process's runtime (idempotent repeats not counted).",
    registers: [registry],
    async collect() {
      // The runtime keeps the monotonic count; prom-client's Counter has no set().
      const started = (await read())?.executionsStartedTotal;
      this.reset();
      if (started !== undefined) this.inc(started);
    },
  });
  new Gauge({
    name: "stepwise_queue_jobs",
    help: "Jobs in the BullMQ queues, by queue (steps, tasks) and state.",
    labelNames: ["queue", "state"],
    registers: [registry],
    async collect() {
      this.reset();
      const depth = (await read())?.queueDepth;
      for (const [queue, states] of Object.entries(depth ?? {})) {
        for (const [state, jobs] of Object.entries(states)) this.set({ queue, state }, jobs);
      }
    },
  });
  new Gauge({
    name: "stepwise_pending_timers",
    help: "Armed timers (Wait states, retry backoffs, task and heartbeat timeouts).",
    registers: [registry],
    async collect() {
      this.reset();
      const timers = (await read())?.pendingTimers;
      if (timers !== undefined) this.set(timers);
    },
  });
  new Counter({
    name: "stepwise_executions_given_up_total",
    help: "Executions failed with States.Runtime because a job of theirs failed every attempt (poison executions).",
    registers: [registry],
    async collect() {
      const givenUp = (await read())?.executionsGivenUpTotal;
      this.reset();
      if (givenUp !== undefined) this.inc(givenUp);
    },
  });
  new Gauge({
    name: "stepwise_pending_task_tokens",
    help: "Task tokens waiting for a callback.",
    registers: [registry],
    async collect() {
      this.reset();
      const tokens = (await read())?.pendingTaskTokens;
      if (tokens !== undefined) this.set(tokens);
    },
  });
}
