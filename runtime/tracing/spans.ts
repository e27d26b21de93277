import type { HistoryEvent } from "../../engine/core/history.js";
import type { Json } from "../../engine/core/json.js";
import type { ExecutionContext, Frame, RunState } from "../../engine/core/run.js";
import { isHttpResource } from "../../task-runners/http.js";
import type { AttemptTrace } from "../../task-runners/runner.js";
import { runParentSpanId, spanIds } from "./span-ids.js";
import type { ExecutionTrace } from "./trace-context.js";

/**
 * Spans as plain data, built after the fact from what a commit made durable (see
 * span-ids.ts for why nothing is held open). Pure: the exporter (otlp.ts)
 * turns them into OpenTelemetry's spans at the edge.
 *
 * Names and attributes: OpenTelemetry's workflow conventions (development status)
 * give the attributes (`workflow.*`: an execution, its tasks and their runs) but no
 * span-name template, so names follow the general rule — a low-cardinality
 * `{kind} {name}` — and HTTP calls follow the stable HTTP client convention
 * (name = method, `http.request.method`, `url.full`, `server.address`,
 * `http.response.status_code`, `error.type`).
 *
 *   workflow <state machine>      the execution (INTERNAL, parent: the start's caller)
 *   state <state name>            one entry into a state (parent: the execution, or the
 *                                 Map/Parallel state whose child run it is)
 *   attempt <state name>          one task attempt (parent: its state entry)
 *   <METHOD>                      an HTTP task's request (CLIENT, parent: the attempt)
 */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: "internal" | "client";
  startMs: number;
  endMs: number;
  attributes: Record<string, string | number | boolean>;
  /** Set when the span ended in an error (status ERROR, `error.type`). */
  error?: { type: string; message?: string };
}

export const PLATFORM = "stepwise";

/** What one committed transition tells of spans that ended in it. */
export interface CommittedTransition {
  trace: ExecutionTrace;
  context: ExecutionContext;
  /** The run before and after the step. */
  before: RunState;
  after: RunState;
  /** The history events the commit appended, in order. */
  history: readonly HistoryEvent[];
  /** The `Type` of a state of the run's scope (for a state that ended without an exit event). */
  stateType: (name: string) => string | undefined;
}

interface OpenState {
  name: string;
  enteredEventId: number;
  startMs: number;
  join?: string;
}

const EXECUTION_ENDS = new Set([
  "ExecutionSucceeded",
  "ExecutionFailed",
  "ExecutionAborted",
  "ExecutionTimedOut",
]);

/**
 * The spans that ended in one commit: each state entry the commit closed (by its
 * `…StateExited`, or by the run leaving it otherwise: a failure, a stop), and the
 * execution's span when the commit ended the execution. A state entered in an
 * earlier commit is known from the run's frame (its entered event id and time).
 */
export function spansOfCommit(c: CommittedTransition): SpanRecord[] {
  const { trace, context, before, after, history } = c;
  const spans: SpanRecord[] = [];
  const traceId = trace.traceId;
  const runId = before.runId;
  const parent = runParentSpanId(traceId, runId, context.executionId);
  let open: OpenState | undefined = before.current ? openOf(before.current) : undefined;
  let failure: { type: string; message?: string } | undefined;
  const close = (state: OpenState, endMs: number, type: string | undefined) => {
    const span: SpanRecord = {
      traceId,
      spanId: state.join
        ? spanIds.join(traceId, state.join)
        : spanIds.state(traceId, runId, state.enteredEventId),
      parentSpanId: parent,
      name: `state ${state.name}`,
      kind: "internal",
      startMs: state.startMs,
      endMs: Math.max(endMs, state.startMs),
      attributes: {
        ...common(context),
        "workflow.task.name": state.name,
        "workflow.task.id": `${runId}#${state.enteredEventId}`,
        ...(type ? { "stepwise.state.type": type } : {}),
        ...(before.iteration !== undefined ? { "stepwise.map.iteration": before.iteration } : {}),
        ...(before.parent && before.iteration === undefined
          ? { "stepwise.parallel.branch": before.parent.index }
          : {}),
      },
    };
    if (failure) span.error = failure;
    spans.push(span);
    failure = undefined;
  };
  for (const event of history) {
    const at = Date.parse(event.timestamp);
    if (event.type.endsWith("StateEntered")) {
      const name = detail(event, "name");
      open = { name: typeof name === "string" ? name : "?", enteredEventId: event.id, startMs: at };
      // A Map or Parallel entered in this commit names its join in the run it leaves behind.
      if (after.current?.enteredEventId === event.id) open.join = joinOf(after.current);
    } else if (event.type.endsWith("StateExited")) {
      if (open) close(open, at, event.type.slice(0, -"StateExited".length));
      open = undefined;
    } else if (EXECUTION_ENDS.has(event.type)) {
      const span = executionSpan(c, event);
      spans.push(span);
      // A state still open when its execution failed, timed out or was stopped ends with it.
      failure ??= span.error;
    } else if (/(Failed|TimedOut|Aborted)$/.test(event.type) && !event.type.startsWith("MapIter")) {
      const error = detail(event, "error");
      failure = {
        type: typeof error === "string" ? error : event.type,
        ...messageOf(detail(event, "cause")),
      };
    }
  }
  // Left without an exit event (failed uncaught, stopped, timed out): it ends here.
  if (open && after.current?.enteredEventId !== open.enteredEventId) {
    const last = history[history.length - 1];
    if (!failure && after.status === "FAILED" && after.error !== undefined)
      failure = { type: after.error };
    close(open, last ? Date.parse(last.timestamp) : open.startMs, c.stateType(open.name));
  }
  return spans;
}

function executionSpan(c: CommittedTransition, end: HistoryEvent): SpanRecord {
  const { trace, context } = c;
  const status = end.type.slice("Execution".length).toUpperCase();
  const span: SpanRecord = {
    traceId: trace.traceId,
    spanId: spanIds.execution(trace.traceId),
    name: `workflow ${context.stateMachineName}`,
    kind: "internal",
    startMs: Date.parse(context.startTime),
    endMs: Date.parse(end.timestamp),
    attributes: {
      ...common(context),
      "workflow.execution.result": RESULTS[status] ?? "error",
      "stepwise.execution.status": status === "TIMEDOUT" ? "TIMED_OUT" : status,
    },
  };
  if (trace.parentSpanId !== undefined) span.parentSpanId = trace.parentSpanId;
  if (end.type !== "ExecutionSucceeded") {
    const error = detail(end, "error");
    span.error = {
      type: typeof error === "string" ? error : status,
      ...messageOf(detail(end, "cause")),
    };
  }
  return span;
}

const RESULTS: Record<string, string> = {
  SUCCEEDED: "success",
  FAILED: "failure",
  ABORTED: "cancellation",
  TIMEDOUT: "timeout",
};

/** One task attempt as the worker ran it (the call's own start and end). */
export interface FinishedAttempt {
  trace: AttemptTrace;
  executionId: string;
  stateMachineName: string;
  stateName: string;
  resource: string;
  taskId: string;
  /** 0 for the first attempt (as TaskRequest counts). */
  attempt: number;
  input: Json;
  startMs: number;
  endMs: number;
  output?: Json;
  error?: { type: string; message?: string };
}

/**
 * The attempt's span and, for an HTTP task, its request's client span — the span
 * whose id the request's `traceparent` carried, so the called server's spans hang
 * under it.
 */
export function spansOfAttempt(a: FinishedAttempt): SpanRecord[] {
  const base = {
    "workflow.platform.name": PLATFORM,
    "workflow.execution.id": a.executionId,
    "workflow.definition.name": a.stateMachineName,
  };
  const attempt: SpanRecord = {
    traceId: a.trace.traceId,
    spanId: a.trace.spanId,
    parentSpanId: a.trace.parentSpanId,
    name: `attempt ${a.stateName}`,
    kind: "internal",
    startMs: a.startMs,
    endMs: a.endMs,
    attributes: {
      ...base,
      "workflow.task.name": a.stateName,
      "workflow.task.run.id": a.taskId,
      "workflow.execution.attempt": a.attempt + 1,
      "workflow.task.run.result": a.error ? "failure" : "success",
      "stepwise.task.resource": a.resource,
    },
  };
  if (a.error) attempt.error = a.error;
  const http = httpSpan(a);
  return http ? [attempt, http] : [attempt];
}

function httpSpan(a: FinishedAttempt): SpanRecord | undefined {
  if (!isHttpResource(a.resource) || !isObject(a.input)) return undefined;
  const endpoint = a.input.ApiEndpoint;
  if (typeof endpoint !== "string") return undefined;
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return undefined;
  }
  const method = typeof a.input.Method === "string" ? a.input.Method.toUpperCase() : "GET";
  const status = statusOf(a);
  // url.full without credentials or query (both may hold secrets).
  const span: SpanRecord = {
    traceId: a.trace.traceId,
    spanId: a.trace.traceparent.split("-")[2]!,
    parentSpanId: a.trace.spanId,
    name: method,
    kind: "client",
    startMs: a.startMs,
    endMs: a.endMs,
    attributes: {
      "http.request.method": method,
      "url.full": `${url.protocol}//${url.host}${url.pathname}`,
      "server.address": url.hostname,
      "server.port": Number(url.port || (url.protocol === "https:" ? 443 : 80)),
      ...(status !== undefined ? { "http.response.status_code": status } : {}),
    },
  };
  if (a.error) {
    // HTTP convention: error.type is the status code for a 4xx/5xx, else the failure's name.
    span.error = { ...a.error, type: status !== undefined ? String(status) : a.error.type };
  }
  return span;
}

function statusOf(a: FinishedAttempt): number | undefined {
  if (isObject(a.output) && typeof a.output.StatusCode === "number") return a.output.StatusCode;
  const m = /^States\.Http\.StatusCode\.(\d{3})$/.exec(a.error?.type ?? "");
  return m ? Number(m[1]) : undefined;
}

function common(context: ExecutionContext): Record<string, string> {
  return {
    "workflow.platform.name": PLATFORM,
    "workflow.execution.id": context.executionId,
    "workflow.definition.name": context.stateMachineName,
  };
}

function openOf(frame: Frame): OpenState {
  const open: OpenState = {
    name: frame.name,
    enteredEventId: frame.enteredEventId,
    startMs: Date.parse(frame.enteredTime),
  };
  const join = joinOf(frame);
  if (join !== undefined) open.join = join;
  return open;
}

/** The child-run prefix of a Map or Parallel state waiting for (or collecting) its children. */
function joinOf(frame: Frame): string | undefined {
  const phase = frame.phase;
  if (phase.kind === "children") return phase.join.prefix;
  if (phase.kind === "collecting") return phase.prefix;
  return undefined;
}

function detail(event: HistoryEvent, field: string): Json | undefined {
  for (const [key, value] of Object.entries(event)) {
    if (key.endsWith("EventDetails") && value && typeof value === "object") {
      return (value as Record<string, Json | undefined>)[field];
    }
  }
  return undefined;
}

function messageOf(cause: Json | undefined): { message?: string } {
  return typeof cause === "string" && cause !== "" ? { message: cause.slice(0, 1024) } : {};
}

function isObject(value: Json | undefined): value is { [key: string]: Json } {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
