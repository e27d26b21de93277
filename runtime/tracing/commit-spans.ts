import type { HistoryEvent } from "../../engine/core/history.js";
import type { RunState } from "../../engine/core/run.js";
import type { LoadedExecution } from "../commit/execution-cache.js";
import type { SpanSink } from "./sink.js";
import { spansOfCommit } from "./spans.js";

/** After a commit: the spans it ended, to the sink (transition.ts calls this only when there is one). */
export function emitCommitSpans(
  sink: SpanSink,
  execution: LoadedExecution,
  before: RunState,
  after: RunState,
  history: readonly HistoryEvent[],
): void {
  if (history.length === 0) return;
  const { trace, context, program } = execution;
  try {
    const spans = spansOfCommit({
      trace,
      context,
      before,
      after,
      history,
      stateType: (name) => program.scopes.get(before.scope)?.states[name]?.Type,
    });
    if (spans.length > 0) sink.emit(spans);
  } catch (err) {
    // The commit stands whatever happens here: a span is never worth failing a transition.
    sink.failed(err);
  }
}
