import type { AttemptTrace } from "../../task-runners/runner.js";
import { EXECUTION_FIELDS } from "../store/fields.js";
import { executionOf, longId, runOfTask } from "../store/ids.js";
import { spanIds } from "./span-ids.js";
import {
  formatTraceparent,
  traceOfRecord,
  TRACE_FIELDS,
  type ExecutionTrace,
} from "./trace-context.js";

/** What a task job reads of the execution record, in the same round trip as the task. */
export const TRACE_READ = [
  TRACE_FIELDS.traceId,
  TRACE_FIELDS.traceState,
  EXECUTION_FIELDS.startedAt,
] as const;

/**
 * A task attempt's trace context, from its task id (short), its state entry's
 * event id and the `TRACE_READ` fields. Records written before entries were
 * recorded name no entry: the attempt then hangs under its run's span instead.
 */
export function attemptTrace(
  task: string,
  enteredEventId: number | undefined,
  fields: readonly (string | null)[] | undefined,
): AttemptTrace {
  const [traceIdField, traceState, startedAt] = fields ?? [];
  const executionArn = longId(executionOf(task));
  const { traceId } = traceOfRecord(executionArn, startedAt, traceIdField);
  const taskId = longId(task);
  const runId = longId(runOfTask(task));
  const trace: AttemptTrace = {
    traceId,
    spanId: spanIds.attempt(traceId, taskId),
    parentSpanId:
      enteredEventId !== undefined
        ? spanIds.state(traceId, runId, enteredEventId)
        : spanIds.execution(traceId),
    traceparent: formatTraceparent(traceId, spanIds.http(traceId, taskId)),
  };
  if (traceState) trace.tracestate = traceState;
  return trace;
}

/**
 * An Express task attempt's trace context. Express executions keep no history to
 * build spans from, so none is exported: the called server still joins the
 * execution's trace, under a span of this attempt that only its id names.
 */
export function expressAttemptTrace(trace: ExecutionTrace, taskId: string): AttemptTrace {
  const { traceId } = trace;
  const out: AttemptTrace = {
    traceId,
    spanId: spanIds.attempt(traceId, taskId),
    parentSpanId: trace.parentSpanId ?? spanIds.execution(traceId),
    traceparent: formatTraceparent(traceId, spanIds.http(traceId, taskId)),
  };
  if (trace.traceState !== undefined) out.tracestate = trace.traceState;
  return out;
}
