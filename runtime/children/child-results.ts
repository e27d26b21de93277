import type { Json, JsonObject } from "../../engine/core/json.js";
import type { ExecutionRecord } from "../contract/index.js";
import { stateMachineArn } from "../store/ids.js";
import type { ChildPattern } from "./child-parameters.js";

/** What the parent's task gets when a child ends: its output, or a failure. */
export type ChildAnswer =
  { kind: "success"; output: Json } | { kind: "failure"; error: string; cause: string };

/** AWS's StartExecution answer, as the optimized integration returns it (dates: epoch ms). */
export function startAnswer(executionArn: string, startedAt: string): JsonObject {
  return { ExecutionArn: executionArn, StartDate: Date.parse(startedAt) };
}

/**
 * What a child's description is made of: its record, or an EXPRESS child's end as
 * StartSyncExecution answers it (no record is kept of an Express execution).
 */
export type DescribedChild = Pick<
  ExecutionRecord,
  | "executionId"
  | "stateMachine"
  | "name"
  | "status"
  | "startedAt"
  | "stoppedAt"
  | "input"
  | "output"
  | "error"
  | "cause"
  | "pinnedVersion"
  | "alias"
>;

/**
 * AWS's DescribeExecution of the child in the optimized integration's PascalCase:
 * `.sync` keeps `Input` and `Output` as JSON text, `.sync:2` parses them.
 */
export function describeAnswer(record: DescribedChild, pattern: ChildPattern): JsonObject {
  const parsed = pattern === "sync:2";
  const out: JsonObject = {
    ExecutionArn: record.executionId,
    StateMachineArn: stateMachineArn(record.stateMachine),
    Name: record.name,
    Status: record.status === "PAUSED" ? "RUNNING" : record.status,
    StartDate: Date.parse(record.startedAt),
  };
  if (record.pinnedVersion !== undefined) {
    out.StateMachineVersionArn = stateMachineArn(record.stateMachine, record.pinnedVersion);
  }
  if (record.alias !== undefined) {
    out.StateMachineAliasArn = stateMachineArn(record.stateMachine, record.alias);
  }
  if (record.stoppedAt !== undefined) out.StopDate = Date.parse(record.stoppedAt);
  out.Input = parsed ? record.input : JSON.stringify(record.input);
  out.InputDetails = { Included: true };
  if (record.output !== undefined) {
    out.Output = parsed ? record.output : JSON.stringify(record.output);
    out.OutputDetails = { Included: true };
  }
  if (record.error !== undefined) out.Error = record.error;
  if (record.cause !== undefined) out.Cause = record.cause;
  return out;
}

/**
 * A child that ended: SUCCEEDED answers its description; FAILED, TIMED_OUT and
 * ABORTED fail the parent's task with `States.TaskFailed`, whose cause is the
 * child's description as JSON text (as AWS's cause is).
 */
export function childAnswer(record: DescribedChild, pattern: ChildPattern): ChildAnswer {
  const described = describeAnswer(record, pattern);
  if (record.status === "SUCCEEDED") return { kind: "success", output: described };
  return { kind: "failure", error: "States.TaskFailed", cause: JSON.stringify(described) };
}

/**
 * The cause a `.sync` child is stopped with when the parent's task stops waiting for it
 * (the parent stopped or timed out, the task timed out or its heartbeat did, a Parallel
 * sibling failed): the reason AWS gives the resources a `.sync` task managed.
 */
export function parentTaskAbortedCause(parentExecutionArn: string): string {
  return `The Task state in AWS Step Functions execution [${parentExecutionArn}] which was managing this resource was aborted`;
}

/** Whether an execution status is final. */
export function hasEnded(status: string): boolean {
  return status !== "RUNNING" && status !== "PAUSED" && status !== "PENDING_REDRIVE";
}
