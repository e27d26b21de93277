import { HISTORY_FORMAT_AWS } from "../../engine/core/history.js";
import type { RunEventBody } from "../../engine/core/events.js";
import type { Json } from "../../engine/core/json.js";
import { randomHex } from "../../engine/drivers/entropy.js";
import type {
  ExecutionRecord,
  ExecutionStatus,
  ExecutionSummary,
  PauseInfo,
} from "../contract/index.js";
import { readBudget, readUsage, USAGE_FIELDS } from "../commit/usage.js";
import {
  EXECUTION_FIELDS,
  fromStored,
  storedFields,
  type ExecutionField,
} from "../store/fields.js";
import { executionArn, stateMachineArn } from "../store/ids.js";
import { traceFields, traceOfRecord } from "../tracing/trace-context.js";
import type { ExecutionStartOptions } from "./execution-store.js";

/**
 * The execution record, the hash `x:<exec>` (its fields: store/fields.ts
 * `EXECUTION_FIELDS`): the record and listing summary the API shows, decoded
 * from it, and what a start writes (its first event, and the record's fields
 * besides the start script's own). Pure: executions/execution-store.ts does the
 * I/O (and resolves the input and output the hash refers to first).
 */

/** The record's fields a listing reads, by name. */
export const SUMMARY_FIELDS = [
  "status",
  "machine",
  "name",
  "version",
  "startedAt",
  "stoppedAt",
  "error",
  "pause",
  "pinnedVersion",
  "alias",
  "parentExecution",
] as const;

/** `SUMMARY_FIELDS` as stored, for HMGET. */
export const SUMMARY_READ = storedFields(EXECUTION_FIELDS, SUMMARY_FIELDS);

/** What a listing read of one record, by name (null where absent). */
export type SummaryRow = Record<(typeof SUMMARY_FIELDS)[number], string | null>;

/** The record keeps RUNNING while paused (`pause` holds the pause): clients see PAUSED. */
function statusOf(
  status: string | null | undefined,
  pause: string | null | undefined,
): ExecutionStatus {
  return (status === "RUNNING" && pause ? "PAUSED" : (status ?? "RUNNING")) as ExecutionStatus;
}

/** A listing by version or alias keeps the executions started through it. */
export function matches(row: SummaryRow, filter: { pinnedVersion?: number; alias?: string }) {
  if (filter.pinnedVersion !== undefined && row.pinnedVersion !== String(filter.pinnedVersion))
    return false;
  return filter.alias === undefined || row.alias === filter.alias;
}

export function toSummary(row: SummaryRow): ExecutionSummary {
  const summary: ExecutionSummary = {
    executionId: executionArn(row.machine ?? "", row.name ?? ""),
    name: row.name ?? "",
    stateMachine: row.machine ?? "",
    version: Number(row.version ?? 0),
    status: statusOf(row.status, row.pause),
    startedAt: row.startedAt ?? "",
  };
  if (row.error) summary.error = row.error;
  if (row.stoppedAt) summary.stoppedAt = row.stoppedAt;
  if (row.pinnedVersion) summary.pinnedVersion = Number(row.pinnedVersion);
  if (row.alias) summary.alias = row.alias;
  if (row.parentExecution) summary.parentExecution = row.parentExecution;
  return summary;
}

/** The record from its hash (HGETALL), its input and output already read as text. */
export function toRecord(
  executionId: string,
  hash: Readonly<Record<string, string>>,
): ExecutionRecord {
  const f = fromStored(EXECUTION_FIELDS, hash);
  const record: ExecutionRecord = {
    executionId,
    name: f.name ?? "",
    stateMachine: f.machine ?? "",
    version: Number(f.version ?? 0),
    status: statusOf(f.status, f.pause),
    input: JSON.parse(f.input ?? "null") as Json,
    startedAt: f.startedAt ?? "",
  };
  if (f.output !== undefined) record.output = JSON.parse(f.output) as Json;
  if (f.error !== undefined) record.error = f.error;
  if (f.cause !== undefined) record.cause = f.cause;
  if (f.stoppedAt !== undefined) record.stoppedAt = f.stoppedAt;
  if (f.pause !== undefined && f.status === "RUNNING")
    record.pause = JSON.parse(f.pause) as PauseInfo;
  if (f.pinnedVersion !== undefined) record.pinnedVersion = Number(f.pinnedVersion);
  if (f.alias !== undefined) record.alias = f.alias;
  if (f.restartedFrom !== undefined) record.restartedFrom = f.restartedFrom;
  if (f.redriveCount !== undefined) record.redriveCount = Number(f.redriveCount);
  if (f.redrivenAt !== undefined) record.redrivenAt = f.redrivenAt;
  if (f.parentExecution !== undefined) record.parentExecution = f.parentExecution;
  // A Distributed Map's child execution (map-runs/child-executions.ts): the Map Run that started it.
  if (f.mapRun !== undefined) record.mapRunArn = f.mapRun;
  if (f.historyHead !== undefined)
    record.historyHead = { eventId: Number(f.historyCount ?? 0), hash: f.historyHead };
  record.traceId = traceOfRecord(executionId, f.startedAt, f.traceId).traceId;
  if (f.forkedFrom !== undefined) {
    const at = f.forkedFrom.lastIndexOf("@");
    record.forkedFrom = {
      executionId: f.forkedFrom.slice(0, at),
      eventId: Number(f.forkedFrom.slice(at + 1)),
    };
  }
  const budget = readBudget(f.budget);
  if (budget) record.budget = budget;
  // Shown once there is something to show: a budget, or a model call made.
  if (budget || Object.values(USAGE_FIELDS).some((field) => hash[field] !== undefined)) {
    record.usage = readUsage(hash);
  }
  return record;
}

/** The first event of an execution: Started, or the Forked event of a fork. */
export function firstEvent(
  machine: string,
  version: number,
  input: Json,
  options: ExecutionStartOptions,
): RunEventBody {
  if (options.forked)
    return { ...options.forked, ...(options.caller ? { caller: options.caller.name } : {}) };
  // Who started it rides with the event into ExecutionStarted's details (transition.ts annotate).
  // 128 random bits for States.UUID/$uuid/$random, kept in the run (and so in replay).
  // New executions write AWS's history shape (engine/core/history.ts); older ones keep theirs.
  const started: RunEventBody = {
    type: "Started",
    input,
    seed: randomHex(16),
    historyFormat: HISTORY_FORMAT_AWS,
  };
  if (options.caller) started.caller = options.caller.name;
  if (options.roleArn !== undefined) started.roleArn = options.roleArn;
  if (options.restartedFrom !== undefined) started.restartedFrom = options.restartedFrom;
  if (options.pinned) {
    started.stateMachineVersionArn = stateMachineArn(machine, version);
    if (options.pinned.alias !== undefined)
      started.stateMachineAliasArn = stateMachineArn(machine, options.pinned.alias);
  }
  return started;
}

/**
 * The record's fields besides those the start script writes, by name: written
 * with it, so a caller's trace and the budget are there before any span, task or
 * model call. (ExecutionStarted, written with the start itself, is the durable
 * account of which version ran; these are for DescribeExecution and listings.)
 */
export function startRecord(
  version: number,
  options: ExecutionStartOptions,
): Partial<Record<ExecutionField, string | number>> {
  const record: Partial<Record<ExecutionField, string | number>> = options.trace
    ? traceFields(options.trace)
    : {};
  if (options.pinned) record.pinnedVersion = version;
  if (options.pinned?.alias !== undefined) record.alias = options.pinned.alias;
  if (options.restartedFrom !== undefined) record.restartedFrom = options.restartedFrom;
  if (options.forked)
    record.forkedFrom = `${options.forked.sourceExecution}@${options.forked.sourceEventId}`;
  if (options.budget !== undefined) record.budget = JSON.stringify(options.budget);
  // Every step's context reads it (`$$.Execution.RoleArn`), not only ExecutionStarted.
  if (options.roleArn !== undefined) record.roleArn = options.roleArn;
  return record;
}
