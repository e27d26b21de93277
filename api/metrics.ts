import type { ExecutionStatus } from "../runtime/contract.js";

/**
 * Prometheus metrics in the text exposition format (version 0.0.4), written by hand:
 * a handful of counters, gauges and one histogram do not need prom-client.
 *
 * The runtime contributes what only it knows through `MetricsSource` — a small,
 * optional interface so the API stays decoupled from how the runtime counts. A
 * runtime that offers `metrics()` gets its figures exported; one that does not simply
 * has those series missing.
 */
export interface HistogramSnapshot {
  /** Cumulative counts per upper bound, ascending `le` (seconds); +Inf is `count`. */
  buckets: { le: number; count: number }[];
  /** Sum of all observations, in seconds. */
  sum: number;
  count: number;
}

export interface RuntimeMetrics {
  /** Executions currently stored, by status. */
  executionsByStatus?: Partial<Record<ExecutionStatus, number>>;
  /** Executions started since the runtime's counters began (monotonic). */
  executionsStartedTotal?: number;
  /** Committed transitions (one per BullMQ job that advanced an execution; monotonic). */
  transitionsTotal?: number;
  /** Time from a transition's job being enqueued to its commit. */
  transitionLatencySeconds?: HistogramSnapshot;
  /** Jobs by BullMQ state: waiting, active, delayed, … */
  queueDepth?: Record<string, number>;
  /** Armed timers (Wait states, retry backoffs, task and heartbeat timeouts). */
  pendingTimers?: number;
  /** Task tokens waiting for a callback. */
  pendingTaskTokens?: number;
}

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

/** Label values are escaped as the exposition format asks: backslash, quote, newline. */
function labelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

function labels(pairs: Record<string, string>): string {
  const entries = Object.entries(pairs);
  if (entries.length === 0) return "";
  return `{${entries.map(([k, v]) => `${k}="${labelValue(v)}"`).join(",")}}`;
}

function number(value: number): string {
  if (value === Infinity) return "+Inf";
  if (value === -Infinity) return "-Inf";
  return Number.isNaN(value) ? "NaN" : String(value);
}

/** Collects lines metric by metric, each with its HELP and TYPE header once. */
export class Exposition {
  private readonly lines: string[] = [];

  metric(
    name: string,
    type: "counter" | "gauge" | "histogram",
    help: string,
    samples: { labels?: Record<string, string>; value: number; suffix?: string }[],
  ): this {
    this.lines.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const s of samples) {
      this.lines.push(`${name}${s.suffix ?? ""}${labels(s.labels ?? {})} ${number(s.value)}`);
    }
    return this;
  }

  histogram(
    name: string,
    help: string,
    series: { labels: Record<string, string>; snapshot: HistogramSnapshot }[],
  ): this {
    const samples: { labels?: Record<string, string>; value: number; suffix?: string }[] = [];
    for (const { labels: l, snapshot } of series) {
      for (const b of snapshot.buckets) {
        samples.push({ suffix: "_bucket", labels: { ...l, le: number(b.le) }, value: b.count });
      }
      samples.push({ suffix: "_bucket", labels: { ...l, le: "+Inf" }, value: snapshot.count });
      samples.push({ suffix: "_sum", labels: l, value: snapshot.sum });
      samples.push({ suffix: "_count", labels: l, value: snapshot.count });
    }
    return this.metric(name, "histogram", help, samples);
  }

  toString(): string {
    return this.lines.join("\n") + "\n";
  }
}

/** Seconds; from 0.5 ms, since a Pass transition on a local Redis takes about that. */
export const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/** A fixed-bucket histogram kept in process (for the API's own request latency). */
export class Histogram {
  private readonly counts: number[];
  private sum = 0;
  private count = 0;

  constructor(private readonly bounds: readonly number[] = LATENCY_BUCKETS) {
    this.counts = bounds.map(() => 0);
  }

  observe(value: number): void {
    this.sum += value;
    this.count++;
    for (let i = 0; i < this.bounds.length; i++) {
      if (value <= this.bounds[i]!) this.counts[i]!++;
    }
  }

  snapshot(): HistogramSnapshot {
    return {
      buckets: this.bounds.map((le, i) => ({ le, count: this.counts[i]! })),
      sum: this.sum,
      count: this.count,
    };
  }
}

/** HTTP metrics of this process, keyed by route pattern (never the raw URL: bounded cardinality). */
export class HttpMetrics {
  private readonly requests = new Map<string, { labels: Record<string, string>; value: number }>();
  private readonly durations = new Map<string, { labels: Record<string, string>; h: Histogram }>();

  record(method: string, route: string, status: number, seconds: number): void {
    const statusLabels = { method, route, status: String(status) };
    const key = `${method} ${route} ${status}`;
    const counter = this.requests.get(key) ?? { labels: statusLabels, value: 0 };
    counter.value++;
    this.requests.set(key, counter);
    const routeKey = `${method} ${route}`;
    let duration = this.durations.get(routeKey);
    if (!duration) {
      duration = { labels: { method, route }, h: new Histogram() };
      this.durations.set(routeKey, duration);
    }
    duration.h.observe(seconds);
  }

  write(out: Exposition): void {
    out.metric(
      "stepwise_http_requests_total",
      "counter",
      "HTTP requests answered, by route and status.",
      [...this.requests.values()].map((c) => ({ labels: c.labels, value: c.value })),
    );
    out.histogram(
      "stepwise_http_request_duration_seconds",
      "HTTP request duration, by route.",
      [...this.durations.values()].map((d) => ({ labels: d.labels, snapshot: d.h.snapshot() })),
    );
  }
}

/** Writes the runtime's figures; each family appears only when the runtime reports it. */
export function writeRuntimeMetrics(out: Exposition, m: RuntimeMetrics): void {
  if (m.executionsByStatus) {
    out.metric(
      "stepwise_executions",
      "gauge",
      "Executions stored, by status.",
      Object.entries(m.executionsByStatus).map(([status, value]) => ({
        labels: { status },
        value: value ?? 0,
      })),
    );
  }
  if (m.executionsStartedTotal !== undefined) {
    out.metric("stepwise_executions_started_total", "counter", "Executions started.", [
      { value: m.executionsStartedTotal },
    ]);
  }
  if (m.transitionsTotal !== undefined) {
    out.metric("stepwise_transitions_total", "counter", "State transitions committed.", [
      { value: m.transitionsTotal },
    ]);
  }
  if (m.transitionLatencySeconds) {
    out.histogram(
      "stepwise_transition_latency_seconds",
      "Time from a transition job being enqueued to its commit.",
      [{ labels: {}, snapshot: m.transitionLatencySeconds }],
    );
  }
  if (m.queueDepth) {
    out.metric(
      "stepwise_queue_jobs",
      "gauge",
      "Transition jobs in the queue, by state.",
      Object.entries(m.queueDepth).map(([state, value]) => ({ labels: { state }, value })),
    );
  }
  if (m.pendingTimers !== undefined) {
    out.metric("stepwise_pending_timers", "gauge", "Armed timers (waits, retries, timeouts).", [
      { value: m.pendingTimers },
    ]);
  }
  if (m.pendingTaskTokens !== undefined) {
    out.metric("stepwise_pending_task_tokens", "gauge", "Task tokens waiting for a callback.", [
      { value: m.pendingTaskTokens },
    ]);
  }
}
