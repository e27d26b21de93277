import { Counter, Histogram, type Registry } from "prom-client";

/** Seconds; from 0.5 ms, since a Pass transition on a local Redis takes about that. */
export const LATENCY_BUCKETS = [
  0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
];

/**
 * What a worker process counts itself: transition jobs by outcome, how long a
 * transition waited in the queue and ran, and the jobs whose lock it lost. Only this process knows these, so each
 * worker exports its own (`stepwise worker --metrics-port`), and `stepwise serve`
 * puts them next to the API's in one registry; Prometheus sums over processes.
 */
export interface WorkerMetrics {
  /** Pass as `startWorker({onTransition})`. */
  onTransition(info: { result: string; latencyMs: number }): void;
  /** Pass as `startWorker({onLockLost})`. */
  onLockLost(): void;
}

export function workerMetrics(registry: Registry): WorkerMetrics {
  const transitions = new Counter({
    name: "stepwise_transitions_total",
    help: "Transitions committed by this worker (committed), and jobs that committed nothing (stale, idle, missing).",
    labelNames: ["result"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "stepwise_transition_latency_seconds",
    help: "Time from a transition becoming due (its job enqueued, or the commit before it in a chain) to its commit.",
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const locksLost = new Counter({
    name: "stepwise_job_locks_lost_total",
    help: "Jobs that outlived their BullMQ lock (STEPWISE_LOCK_MS) in this worker and may have run again elsewhere: harmless, but a sign it holds more jobs than it runs in time.",
    registers: [registry],
  });
  // Present from the start (at 0), so rates work before the first job.
  transitions.inc({ result: "committed" }, 0);
  return {
    onLockLost() {
      locksLost.inc();
    },
    onTransition({ result, latencyMs }) {
      transitions.inc({ result });
      // Only a commit ends a transition; a stale or idle job committed nothing.
      if (result === "committed") latency.observe(latencyMs / 1000);
    },
  };
}
