import { randomUUID } from "node:crypto";
import type { Json } from "../../engine/core/json.js";
import { runExecution, type TaskHandlers } from "../../engine/drivers/memory.js";
import type { Program } from "../../engine/program.js";
import { findRunner, type TaskRunner } from "../../task-runners/runner.js";
import { DATA_LIMIT_BYTES } from "../../engine/step-context.js";
import {
  RuntimeError,
  type SyncExecutionResult,
  type SyncStartOptions,
} from "../contract/index.js";
import { resolveTarget } from "../definitions/start-target.js";
import { ARN_BASE, isValidExecutionName, stateMachineArn } from "../store/ids.js";
import { expressAttemptTrace } from "../tracing/attempt-trace.js";
import { newTrace, type ExecutionTrace } from "../tracing/trace-context.js";
import type { StartContext } from "./operations/context.js";

/**
 * EXPRESS executions (AWS StartSyncExecution, and StartExecution of an EXPRESS
 * machine): run to their end in the API process on the in-memory driver, on the
 * real clock, with the service's task runners, and keep no history — what AWS
 * promises of Express workflows (at-most-once per start, nothing to describe later).
 *
 * The operations (operations/context.ts has their shape): `startSyncExecution`,
 * and `startExpressExecution`, which StartExecution of an EXPRESS machine calls
 * (operations/start.ts). `runExpress` is the run itself, on a resolved version.
 */

/** AWS ends an Express execution after five minutes. */
export const EXPRESS_LIMIT_MS = 5 * 60_000;

/** `arn:aws:states:<region>:<account>:express:<machine>:<name>:<uuid>`, AWS's form. */
export function expressExecutionArn(machine: string, name: string): string {
  return `${ARN_BASE}express:${machine}:${name}:${randomUUID()}`;
}

/**
 * The service's runners as the in-memory driver's handlers. `trace` is asked for
 * when a task first runs: most Express runs call none, and drawing a trace costs
 * random bytes.
 */
export function runnerHandlers(
  runners: readonly TaskRunner[],
  trace?: () => ExecutionTrace,
): TaskHandlers {
  let drawn: ExecutionTrace | undefined;
  const traceOf = trace && (() => (drawn ??= trace()));
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
        ...(traceOf ? { trace: expressAttemptTrace(traceOf(), invocation.taskId) } : {}),
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
export function runExpress(
  start: ExpressStart,
  tasks: TaskHandlers,
): { executionId: string; startedAt: string; result: Promise<SyncExecutionResult> } {
  // A drawn name (a UUID) is valid: only a given one is checked.
  const name = start.name ?? randomUUID();
  if (start.name !== undefined && !isValidExecutionName(name))
    throw new TypeError(`'${name}' is not a valid execution name (AWS's rule, see ids.ts)`);
  const executionId = expressExecutionArn(start.machine, name);
  const startedAt = new Date().toISOString();
  return { executionId, startedAt, result: runToEnd(start, tasks, name, executionId, startedAt) };
}

/**
 * The run, raced against its time limit: how it ended, as StartSyncExecution answers.
 * One promise settled by whichever comes first, the run's end or the timer (not an
 * async function around `Promise.race`: fewer promises per run).
 */
function runToEnd(
  start: ExpressStart,
  tasks: TaskHandlers,
  name: string,
  executionId: string,
  startedAt: string,
): Promise<SyncExecutionResult> {
  const limit = Math.min(start.timeoutMs ?? EXPRESS_LIMIT_MS, EXPRESS_LIMIT_MS);
  const run = runExecution(start.program, {
    input: start.input,
    executionName: name,
    stateMachineName: start.machine,
    executionArn: executionId,
    stateMachineArn: stateMachineArn(start.machine),
    ...(start.roleArn !== undefined ? { roleArn: start.roleArn } : {}),
    clock: "real",
    tasks,
    // Only the outcome is read: no history events or journal are kept (AWS keeps no
    // history of an Express execution, and Stepwise writes no Express logs).
    keepHistory: false,
  });
  const ended = (
    status: SyncExecutionResult["status"],
    rest?: { output?: Json; error?: string; cause?: string },
  ): SyncExecutionResult => {
    const out: SyncExecutionResult = {
      executionId,
      name,
      stateMachine: start.machine,
      version: start.version,
      input: start.input,
      startedAt,
      status,
      stoppedAt: new Date().toISOString(),
    };
    if (rest?.output !== undefined) out.output = rest.output;
    if (rest?.error !== undefined) out.error = rest.error;
    if (rest?.cause !== undefined) out.cause = rest.cause;
    return out;
  };
  return new Promise<SyncExecutionResult>((resolve) => {
    // The run cannot be interrupted mid-state: once timed out, its outcome is ignored
    // (a later `resolve` changes nothing).
    const timer = setTimeout(
      () =>
        resolve(
          ended("TIMED_OUT", {
            error: "States.Timeout",
            cause: "The execution ran longer than 5 minutes",
          }),
        ),
      limit,
    );
    run.then(
      (result) => {
        clearTimeout(timer);
        resolve(ended(result.status, result));
      },
      (err: unknown) => {
        clearTimeout(timer);
        // A definition that loops past the driver's limit, or a stuck one: the
        // execution fails; the service does not.
        resolve(
          ended("FAILED", {
            error: "States.Runtime",
            cause: err instanceof Error ? err.message : String(err),
          }),
        );
      },
    );
  });
}

/**
 * Starts an EXPRESS execution in this process (StateMachineTypeNotSupported for
 * others), on the version its target names; `result` settles when it ends.
 */
export async function startExpressExecution(
  ctx: StartContext,
  stateMachine: string,
  options: SyncStartOptions,
): Promise<ReturnType<typeof runExpress>> {
  const meta = await ctx.recentMeta.get(stateMachine);
  if (meta.type !== "EXPRESS") {
    throw new RuntimeError(
      "StateMachineTypeNotSupported",
      `State machine '${stateMachine}' is STANDARD; only EXPRESS machines run synchronously`,
    );
  }
  const { version } = await resolveTarget(ctx, stateMachine, options, meta.latest);
  const input = options.input ?? {};
  if (Buffer.byteLength(JSON.stringify(input)) > DATA_LIMIT_BYTES) {
    throw new RuntimeError("States.DataLimitExceeded", "The execution input exceeds 256 KiB");
  }
  return runExpress(
    {
      machine: stateMachine,
      version,
      program: await (await ctx.shards).cache.program(stateMachine, version),
      input,
      ...(options.name !== undefined ? { name: options.name } : {}),
      ...(meta.roleArn !== undefined ? { roleArn: meta.roleArn } : {}),
      ...(options.timeoutMs !== undefined ? { timeoutMs: options.timeoutMs } : {}),
    },
    // Its tasks send the start's trace (or one of its own): nothing else of it is kept.
    runnerHandlers(ctx.expressRunners, () => options.trace ?? newTrace()),
  );
}

/** StartSyncExecution: an EXPRESS execution run to its end here, keeping no history. */
export async function startSyncExecution(
  ctx: StartContext,
  stateMachine: string,
  options: SyncStartOptions,
): Promise<SyncExecutionResult> {
  return (await startExpressExecution(ctx, stateMachine, options)).result;
}
