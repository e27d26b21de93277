import type { DefaultRunnerOptions } from "../task-runners/index.js";
import type { TaskRunner } from "../task-runners/runner.js";
import type { RuntimeSettings } from "./settings.js";
import type { SpanSink } from "./tracing/sink.js";

/** What `createRedisRuntime` is given: settings over their defaults, and what runs tasks. */
export type RuntimeOptions = Partial<RuntimeSettings> & {
  taskRunners?: TaskRunner[];
  /** What the default runners of EXPRESS executions are told (egress, limits, model endpoints). */
  runners?: DefaultRunnerOptions;
  /** Where the spans of this process's commits go (default: OTLP when `otlp` is set, else none). */
  spans?: SpanSink;
};
