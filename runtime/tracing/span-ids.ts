import { createHash } from "node:crypto";

/**
 * DETERMINISTIC SPAN IDS.
 *
 * An execution may run for days, over many worker processes and restarts, so no
 * span is ever held open in memory: each is built, finished, from what a commit
 * made durable (spans.ts). The process that emits a span is therefore rarely the
 * one that emitted its parent — a Map iteration ends on another worker, hours
 * after its Map state was entered — and nothing of a span is stored. So a span's
 * id must be computable by anyone from committed facts alone: it is the first 8
 * bytes of SHA-256 over the execution's trace id and the facts that name the
 * span uniquely within the execution:
 *
 *   execution       (trace, "execution")
 *   state entry     (trace, "state", run id, id of its `…StateEntered` event)
 *   Map / Parallel  (trace, "join", the join's child-run prefix `<run>/<serial>`),
 *                   because a child run knows its prefix (its own run id minus
 *                   `/<index>`) but not its parent's event ids
 *   task attempt    (trace, "attempt", task id) — one id per Retry attempt,
 *                   the same across that attempt's redeliveries
 *   HTTP call       (trace, "http", task id): the client span whose id the
 *                   task's `traceparent` header carries
 *
 * Hashing with the trace id keeps two executions (or a fork and its source, which
 * have other trace ids) from ever sharing a span id; re-emitting a span after a
 * crash-and-redelivery yields the very same ids, so a backend sees one span twice
 * rather than two spans.
 *
 * Known limits of the scheme: a Map or Parallel state retried as a whole starts a
 * new join, and its span is named by the last one, so the children of earlier
 * tries point at a span that is never exported; a redriven execution ends twice
 * and exports its execution span twice, under one id.
 */
export function spanId(traceId: string, ...parts: (string | number)[]): string {
  const hash = createHash("sha256").update(traceId);
  for (const part of parts) hash.update("\0").update(String(part));
  const id = hash.digest("hex").slice(0, 16);
  // An all-zero id is invalid (W3C); 2^-64 odds, but never send one.
  return id === "0000000000000000" ? "0000000000000001" : id;
}

export const spanIds = {
  execution: (traceId: string) => spanId(traceId, "execution"),
  state: (traceId: string, runId: string, enteredEventId: number) =>
    spanId(traceId, "state", runId, enteredEventId),
  join: (traceId: string, prefix: string) => spanId(traceId, "join", prefix),
  attempt: (traceId: string, taskId: string) => spanId(traceId, "attempt", taskId),
  http: (traceId: string, taskId: string) => spanId(traceId, "http", taskId),
};

/** The span a run's states hang under: the execution's, or the Map/Parallel state that spawned it. */
export function runParentSpanId(traceId: string, runId: string, executionArn: string): string {
  if (runId === executionArn) return spanIds.execution(traceId);
  // A child run is `<parent run>/<serial>/<index>` (engine/flow/join.ts): its join is all but the index.
  return spanIds.join(traceId, runId.slice(0, runId.lastIndexOf("/")));
}
