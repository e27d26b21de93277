import { createHash } from "node:crypto";
import { randomHex } from "../../engine/drivers/entropy.js";
import { EXECUTION_FIELDS } from "../store/fields.js";

/**
 * W3C Trace Context (https://www.w3.org/TR/trace-context/): what an execution
 * keeps of the trace it belongs to. Every execution has a trace id; a start
 * request that carries `traceparent` joins the caller's trace (its span becomes
 * the parent of the execution's span), one without it opens a trace of its own.
 */
export interface ExecutionTrace {
  /** 32 lowercase hex digits, never all zeros. */
  traceId: string;
  /** The caller's span (16 hex digits), when the start carried `traceparent`. */
  parentSpanId?: string;
  /** The caller's `tracestate`, passed on unchanged to the servers tasks call. */
  traceState?: string;
}

/** The fields of the execution record (`x:<exec>`) that keep the trace. */
export const TRACE_FIELDS = {
  traceId: EXECUTION_FIELDS.traceId,
  parentSpanId: EXECUTION_FIELDS.parentSpanId,
  traceState: EXECUTION_FIELDS.traceState,
} as const;

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE = "0".repeat(32);
const ZERO_SPAN = "0".repeat(16);

/**
 * The trace a start request names, or undefined when its `traceparent` is absent
 * or malformed: the spec asks a receiver to start a new trace then, not to fail.
 * Version `ff` is invalid; a later version than 00 may carry more fields, which
 * are ignored (the spec's forward compatibility).
 */
export function parseTraceparent(
  traceparent: string | string[] | undefined,
  tracestate?: string | string[] | undefined,
): ExecutionTrace | undefined {
  // Lowercase hex only: the spec's grammar has no upper case, and ids must compare as sent.
  const value = single(traceparent)?.trim();
  if (value === undefined) return undefined;
  const m = TRACEPARENT.exec(value);
  if (!m) return undefined;
  const [, version, traceId, parentSpanId] = m as unknown as [string, string, string, string];
  if (version === "ff" || (version === "00" && m[5] !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || parentSpanId === ZERO_SPAN) return undefined;
  const trace: ExecutionTrace = { traceId, parentSpanId };
  const state = validTraceState(single(tracestate));
  if (state !== undefined) trace.traceState = state;
  return trace;
}

/** A trace of the execution's own (no caller's span). */
export function newTrace(): ExecutionTrace {
  let traceId = randomHex(16);
  while (traceId === ZERO_TRACE) traceId = randomHex(16);
  return { traceId };
}

/** `traceparent` for a request made inside `traceId` by the span `spanId` (always sampled). */
export function formatTraceparent(traceId: string, spanId: string): string {
  return `00-${traceId}-${spanId}-01`;
}

/**
 * The record fields a start writes (beside what the start script writes), by
 * their names in store/fields.ts (`TRACE_FIELDS` has their stored names).
 */
export function traceFields(trace: ExecutionTrace): Partial<Record<keyof ExecutionTrace, string>> {
  const fields: Partial<Record<keyof ExecutionTrace, string>> = { traceId: trace.traceId };
  if (trace.parentSpanId !== undefined) fields.parentSpanId = trace.parentSpanId;
  if (trace.traceState !== undefined) fields.traceState = trace.traceState;
  return fields;
}

/**
 * The trace kept in an execution record's fields. The record keeps one only when
 * the execution joined a caller's trace. An execution that opened its own has a
 * trace id derived from its ARN and start time: every reader (the API, each
 * worker) names the same trace without a stored copy, which would cost 34 bytes
 * of every record, parked ones included (issue 19's memory target), and a name
 * reused after a purge starts at another time, so it gets another trace.
 */
export function traceOfRecord(
  executionArn: string,
  startedAt: string | null | undefined,
  traceId: string | null | undefined,
  parentSpanId?: string | null,
  traceState?: string | null,
): ExecutionTrace {
  if (!traceId) return ownTrace(executionArn, startedAt ?? "");
  const trace: ExecutionTrace = { traceId };
  if (parentSpanId) trace.parentSpanId = parentSpanId;
  if (traceState) trace.traceState = traceState;
  return trace;
}

/** The trace of an execution started without a caller's: a pseudo-random id, never all zeros. */
export function ownTrace(executionArn: string, startedAt: string): ExecutionTrace {
  const digest = createHash("sha256").update(`stepwise-trace\n${executionArn}\n${startedAt}`);
  const traceId = digest.digest("hex").slice(0, 32);
  // All zeros is invalid (W3C): 2^-128, but a trace id must never be it.
  return { traceId: traceId === ZERO_TRACE ? `${traceId.slice(0, 31)}1` : traceId };
}

function single(value: string | string[] | undefined): string | undefined {
  // A repeated header: the spec says to treat more than one traceparent as none.
  if (Array.isArray(value)) return value.length === 1 ? value[0] : undefined;
  return value;
}

/**
 * `tracestate` is opaque to us; it is kept only when it is printable ASCII and
 * within the spec's 512 characters, so a malformed one cannot ride into every
 * request the execution's tasks make.
 */
function validTraceState(value: string | undefined): string | undefined {
  const trimmed = value?.trim();
  if (!trimmed || trimmed.length > 512 || !/^[\x20-\x7e]+$/.test(trimmed)) return undefined;
  return trimmed;
}
