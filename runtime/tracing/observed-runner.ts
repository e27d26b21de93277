import type { Json } from "../../engine/core/json.js";
import { describeFailure, type TaskRunner } from "../../task-runners/runner.js";
import { machineOf, shortId } from "../store/ids.js";
import { attemptFields, type WorkerLog } from "./logger.js";
import type { SpanSink } from "./sink.js";
import { spansOfAttempt, type SpanRecord } from "./spans.js";

/**
 * A runner as the worker runs it: each attempt that fails is logged (warn, with
 * its correlation fields) and, when spans are exported, each finished attempt is
 * a span (and its HTTP request a client span). The span is built from the call's
 * own start and end, once the call is over: an attempt cut short by a crash has
 * none, and its redelivery — same task id, so same span id — has one.
 */
export function observedRunner(
  runner: TaskRunner,
  options: { log: WorkerLog; spans?: SpanSink | undefined },
): TaskRunner {
  const { log, spans } = options;
  // Delegated one by one, not spread: a runner may be a class instance, its methods on its prototype.
  return {
    name: runner.name,
    handles: (resource) => runner.handles(resource),
    ...(runner.answersCallbacks !== undefined ? { answersCallbacks: runner.answersCallbacks } : {}),
    async run(request) {
      const startMs = Date.now();
      let output: Json;
      try {
        output = await runner.run(request);
      } catch (err) {
        // A shutdown hands the job back: the attempt has not ended.
        if (request.signal.aborted) throw err;
        const failure = describeFailure(err);
        log.warn(
          { ...attemptFields(request), error: failure.error, cause: failure.cause.slice(0, 1000) },
          `task attempt ${request.attempt + 1} of '${request.stateName}' failed: ${failure.error}`,
        );
        if (spans && request.trace) {
          const error = {
            type: failure.error,
            ...(failure.cause ? { message: failure.cause } : {}),
          };
          emit(spans, () => spansOfAttempt({ ...attemptOf(request, startMs), error }));
        }
        throw err;
      }
      if (spans && request.trace) {
        emit(spans, () =>
          spansOfAttempt({ ...attemptOf(request, startMs), output: output ?? null }),
        );
      }
      return output;
    },
  };

  /** The attempt's outcome stands whatever happens here: spans are never worth a task. */
  function emit(sink: SpanSink, build: () => SpanRecord[]): void {
    try {
      sink.emit(build());
    } catch (err) {
      sink.failed(err);
    }
  }

  function attemptOf(request: Parameters<TaskRunner["run"]>[0], startMs: number) {
    return {
      trace: request.trace!,
      executionId: request.executionId,
      stateMachineName: machineOf(shortId(request.executionId)),
      stateName: request.stateName,
      resource: request.resource,
      taskId: request.taskId,
      attempt: request.attempt,
      input: request.input,
      startMs,
      endMs: Date.now(),
    };
  }
}
