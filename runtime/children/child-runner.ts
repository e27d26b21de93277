import type { Json } from "../../engine/core/json.js";
import { isChildExecution } from "../../task-runners/resources.js";
import { TaskError, type TaskRequest, type TaskRunner } from "../../task-runners/runner.js";
import { RuntimeError, type StartOptions, type StartResult } from "../contract/index.js";
import { EXECUTION_ARN_PREFIX, shortId } from "../store/ids.js";
import type { Keys } from "../store/keys.js";
import type { ExecutionTrace } from "../tracing/trace-context.js";
import type { ChildLinks } from "./child-links.js";
import { derivedChildName, parseChildRequest, type ChildRequest } from "./child-parameters.js";
import { hasEnded, startAnswer } from "./child-results.js";

/** What the runner needs of a runtime: starting an execution, and its shard's keys. */
export interface ChildStarter {
  startExecution(stateMachine: string, options: StartOptions): Promise<StartResult>;
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
      const started = await start(rt, child, request);
      if (!started.executionId.startsWith(EXECUTION_ARN_PREFIX)) {
        // An Express child runs in the starting process and keeps no record to watch.
        if (!waits) return startAnswer(started.executionId, started.startedAt);
        throw new TaskError(
          "StepFunctions.StateMachineTypeNotSupportedException",
          `${child.pattern} of an EXPRESS state machine is not supported: '${child.machine}'`,
        );
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
