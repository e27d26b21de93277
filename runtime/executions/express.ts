import { randomUUID } from "node:crypto";
import type { Json } from "../../engine/core/json.js";
import { runExecution, type TaskHandlers } from "../../engine/drivers/memory.js";
import type { Program } from "../../engine/program.js";
import { findRunner, type TaskRunner } from "../../task-runners/runner.js";
import type { SyncExecutionResult } from "../contract/index.js";
import { ARN_BASE, isValidExecutionName, stateMachineArn } from "../store/ids.js";
import { expressAttemptTrace } from "../tracing/attempt-trace.js";
import type { ExecutionTrace } from "../tracing/trace-context.js";

/**
 * EXPRESS executions (AWS StartSyncExecution, and StartExecution of an EXPRESS
 * machine): run to their end in the API process on the in-memory driver, on the
 * real clock, with the service's task runners, and keep no history — what AWS
 * promises of Express workflows (at-most-once per start, nothing to describe later).
 */

/** AWS ends an Express execution after five minutes. */
export const EXPRESS_LIMIT_MS = 5 * 60_000;

/** `arn:aws:states:<region>:<account>:express:<machine>:<name>:<uuid>`, AWS's form. */
export function expressExecutionArn(machine: string, name: string): string {
  return `${ARN_BASE}express:${machine}:${name}:${randomUUID()}`;
}

/** The service's runners as the in-memory driver's handlers. */
export function runnerHandlers(
  runners: readonly TaskRunner[],
  trace?: ExecutionTrace,
): TaskHandlers {
  return (resource) => {
    const runner = findRunner(runners, resource);
    if (!runner) return undefined;
    return (input, invocation) =>
      runner.run({
        resource: invocation.resource,
        stateName: invocation.stateName,
        taskId: invocation.taskId,
        operationKey: invocation.operationKey,
        executionId: invocation.taskId,
        attempt: invocation.attempt,
        input,
        ...(invocation.taskToken !== undefined ? { taskToken: invocation.taskToken } : {}),
        ...(trace ? { trace: expressAttemptTrace(trace, invocation.taskId) } : {}),
        signal: new AbortController().signal,
      });
  };
}

export interface ExpressStart {
  machine: string;
  version: number;
  program: Program;
  input: Json;
  name?: string;
  roleArn?: string;
  timeoutMs?: number;
}

/** Starts the run; `result` settles when it ends (never rejects). */
export function startExpress(
  start: ExpressStart,
  tasks: TaskHandlers,
): { executionId: string; startedAt: string; result: Promise<SyncExecutionResult> } {
  const name = start.name ?? randomUUID();
  if (!isValidExecutionName(name))
    throw new TypeError(`'${name}' is not a valid execution name (AWS's rule, see ids.ts)`);
  const executionId = expressExecutionArn(start.machine, name);
  const startedAt = new Date().toISOString();
  return { executionId, startedAt, result: finish(start, tasks, name, executionId, startedAt) };
}

async function finish(
  start: ExpressStart,
  tasks: TaskHandlers,
  name: string,
  executionId: string,
  startedAt: string,
): Promise<SyncExecutionResult> {
  const limit = Math.min(start.timeoutMs ?? EXPRESS_LIMIT_MS, EXPRESS_LIMIT_MS);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<"timeout">((resolve) => {
    timer = setTimeout(() => resolve("timeout"), limit);
  });
  const run = runExecution(start.program, {
    input: start.input,
    executionName: name,
    stateMachineName: start.machine,
    executionArn: executionId,
    stateMachineArn: stateMachineArn(start.machine),
    ...(start.roleArn !== undefined ? { roleArn: start.roleArn } : {}),
    clock: "real",
    tasks,
  });
  const base = {
    executionId,
    name,
    stateMachine: start.machine,
    version: start.version,
    input: start.input,
    startedAt,
  };
  try {
    const result = await Promise.race([run, timedOut]);
    const stoppedAt = new Date().toISOString();
    if (result === "timeout") {
      // The run cannot be interrupted mid-state; its outcome is ignored from here on.
      run.catch(() => undefined);
      return {
        ...base,
        status: "TIMED_OUT",
        error: "States.Timeout",
        cause: "The execution ran longer than 5 minutes",
        stoppedAt,
      };
    }
    const out: SyncExecutionResult = { ...base, status: result.status, stoppedAt };
    if (result.output !== undefined) out.output = result.output;
    if (result.error !== undefined) out.error = result.error;
    if (result.cause !== undefined) out.cause = result.cause;
    return out;
  } catch (err) {
    // A definition that loops past the driver's limit, or a stuck one: the
    // execution fails; the service does not.
    return {
      ...base,
      status: "FAILED",
      error: "States.Runtime",
      cause: err instanceof Error ? err.message : String(err),
      stoppedAt: new Date().toISOString(),
    };
  } finally {
    clearTimeout(timer);
  }
}
