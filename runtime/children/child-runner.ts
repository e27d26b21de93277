import type { Json } from "../../engine/core/json.js";
import { isChildExecution } from "../../task-runners/resources.js";
import { TaskError, type TaskRequest, type TaskRunner } from "../../task-runners/runner.js";
import {
  RuntimeError,
  type StartOptions,
  type StartResult,
  type SyncExecutionResult,
  type SyncStartOptions,
} from "../contract/index.js";
import { EXECUTION_ARN_PREFIX, shortId } from "../store/ids.js";
import type { Keys } from "../store/keys.js";
import type { ExecutionTrace } from "../tracing/trace-context.js";
import type { ChildLinks } from "./child-links.js";
import { derivedChildName, parseChildRequest, type ChildRequest } from "./child-parameters.js";
import { childAnswer, hasEnded, startAnswer } from "./child-results.js";

/**
 * What the runner needs of a runtime: starting an execution (a STANDARD one, or an
 * EXPRESS one run to its end here), its shard's keys, and answering the parent's token.
 */
export interface ChildStarter {
  startExecution(stateMachine: string, options: StartOptions): Promise<StartResult>;
  startSyncExecution(stateMachine: string, options: SyncStartOptions): Promise<SyncExecutionResult>;
  sendTaskSuccess(token: string, output: Json): Promise<void>;
  keysOf(executionId: string): Promise<Keys>;
}

/**
 * The worker's runner of `arn:aws:states:::states:startExecution` (and `.sync`,
 * `.sync:2`, `.waitForTaskToken`): starts the child and answers AWS's
 * StartExecution result. The child's name is the task's `Name`, or derived from
 * the attempt's operation key, so a redelivered attempt finds the child it started
 * (an idempotent start: same name, same input). The link to the parent is
 * recorded after the start (child-links.ts); for `.sync`/`.sync:2` the task then
 * waits on its token (task-runners/resources.ts `waitsForChild`) until the child's
 * end answers it (child-watch.ts). `.waitForTaskToken` waits for whoever the
 * child hands `$$.Task.Token` to.
 */
export function childRunner(runtime: () => ChildStarter, links: ChildLinks): TaskRunner {
  return {
    name: "states:startExecution",
    handles: isChildExecution,
    async run(request): Promise<Json> {
      const child = parseChildRequest(request.resource, request.input, request.executionId);
      const waits = child.pattern === "sync" || child.pattern === "sync:2";
      if (waits && request.taskToken === undefined) {
        throw new TaskError("States.Runtime", "states:startExecution.sync runs without a token");
      }
      const rt = runtime();
      if (waits) {
        const express = await runExpressChild(rt, child, request);
        if (express) return express;
      }
      const started = await start(rt, child, request);
      // An Express child (fire and forget) runs in the starting process and keeps no record.
      if (!started.executionId.startsWith(EXECUTION_ARN_PREFIX)) {
        return startAnswer(started.executionId, started.startedAt);
      }
      const record = (await rt.keysOf(started.executionId)).execution(shortId(started.executionId));
      const { owner, status } = await links.claim(record, request.taskId);
      if (!started.created && owner !== request.taskId && status !== null && hasEnded(status)) {
        // Another attempt's (or another entry's) child of that name, ended: as AWS answers a
        // second start of an ended execution's name.
        throw new TaskError(
          "StepFunctions.ExecutionAlreadyExistsException",
          `Execution Already Exists: '${started.executionId}'`,
        );
      }
      await links.link(
        record,
        started.executionId,
        request.executionId,
        waits
          ? { parent: request.executionId, token: request.taskToken!, pattern: child.pattern }
          : undefined,
      );
      return startAnswer(started.executionId, started.startedAt);
    },
  };
}

/**
 * `.sync` / `.sync:2` of an EXPRESS state machine: AWS lets a Standard parent run an
 * Express child and wait for it ("Run a Job"); the task's result is the child's
 * description (DescribeExecution's fields, `.sync` with `Input`/`Output` as text).
 * An Express execution keeps no record to watch, so it runs here, to its end (at most
 * AWS's 5 minutes), inside this call: a worker that dies meanwhile leaves the call's
 * claim to run out and the attempt runs again, as AWS runs Express children at least
 * once. Its end answers the task: a success through the task's token (the task waits
 * on it, as for any `.sync` child), a failure as the call's own `States.TaskFailed`
 * with the description as its cause. Undefined for a STANDARD machine (started and
 * watched as usual).
 */
async function runExpressChild(
  runtime: ChildStarter,
  child: ChildRequest,
  request: TaskRequest,
): Promise<Json | undefined> {
  const options: SyncStartOptions = {
    input: child.input,
    name: child.name ?? derivedChildName(request.operationKey, request.attempt),
  };
  if (child.version !== undefined) options.version = child.version;
  if (child.alias !== undefined) options.alias = child.alias;
  if (request.trace) options.trace = childTrace(request.trace);
  let ended: SyncExecutionResult;
  try {
    ended = await untilAborted(runtime.startSyncExecution(child.machine, options), request.signal);
  } catch (err) {
    if (err instanceof RuntimeError && err.code === "StateMachineTypeNotSupported")
      return undefined;
    throw asTaskError(err);
  }
  const answer = childAnswer(ended, child.pattern);
  if (answer.kind === "failure") throw new TaskError(answer.error, answer.cause);
  // The task waits on its token: the answer goes there (a task that stopped waiting
  // meanwhile, timed out or stopped, refuses it, and nothing is left to do).
  await runtime.sendTaskSuccess(request.taskToken!, answer.output).catch((err: unknown) => {
    if (!(err instanceof RuntimeError)) throw err;
  });
  return startAnswer(ended.executionId, ended.startedAt);
}

/** The run's end, or a rejection once the worker shuts down (the attempt runs again). */
function untilAborted<T>(run: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return run;
  if (signal.aborted) return Promise.reject(new Error("the worker is shutting down"));
  return new Promise<T>((resolve, reject) => {
    const abort = () => reject(new Error("the worker is shutting down"));
    signal.addEventListener("abort", abort, { once: true });
    run.then(
      (value) => {
        signal.removeEventListener("abort", abort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", abort);
        reject(err);
      },
    );
  });
}

async function start(
  runtime: ChildStarter,
  child: ChildRequest,
  request: TaskRequest,
): Promise<StartResult> {
  const options: StartOptions = {
    input: child.input,
    name: child.name ?? derivedChildName(request.operationKey, request.attempt),
  };
  if (child.version !== undefined) options.version = child.version;
  if (child.alias !== undefined) options.alias = child.alias;
  // The child joins the parent's trace, under the attempt's span.
  if (request.trace) options.trace = childTrace(request.trace);
  try {
    return await runtime.startExecution(child.machine, options);
  } catch (err) {
    throw asTaskError(err);
  }
}

function childTrace(trace: NonNullable<TaskRequest["trace"]>): ExecutionTrace {
  const out: ExecutionTrace = { traceId: trace.traceId, parentSpanId: trace.spanId };
  if (trace.tracestate !== undefined) out.traceState = trace.tracestate;
  return out;
}

/** A refused start, named as AWS's integration names it (`StepFunctions.<Code>Exception`). */
export function asTaskError(err: unknown): unknown {
  if (err instanceof RuntimeError)
    return new TaskError(`StepFunctions.${err.code}Exception`, err.message);
  return err;
}
