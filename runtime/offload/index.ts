import { Counter, type Registry } from "prom-client";
import { offloadHeavySteps, stopOffloading } from "../../engine/drivers/heavy-steps.js";
import type { StepSlice } from "../../engine/core/step-slice.js";
import { StepThread } from "./step-thread.js";

/**
 * Heavy steps off the serving thread (engine/core/step-slice.ts has why). `serve`
 * and `worker` call `offloadSteps` at start with the evaluation thread's entry
 * (cli/evaluation-thread.ts, beside the built CLI), and close it when they stop.
 */

/**
 * What a serving thread evaluates inline: about 10-20 ms of CPU (measured warm on
 * a 2-core VM: 10,000 jsonata steps of `$map` over a range in 12-18 ms, of regex
 * searches in 12 ms; 100,000 JSONPath visits in about 10 ms, a JSONPath result of a
 * MiB of JSON serialized in about as long; regex searches over
 * 4,096 characters even before the JIT compiled them), so `/health` and every
 * request wait at most that long behind a step. The states of typical machines use
 * a few hundred steps; a step past the slice costs its slice again on the thread,
 * and a copy of its run and input there and back.
 */
export const SERVING_SLICE: Readonly<StepSlice> = Object.freeze({
  jsonataSteps: 10_000,
  pathVisits: 100_000,
  pathResultChars: 1 << 20,
  regexChars: 4_096,
});

export interface Offload {
  /** Steps handed to the evaluation thread since start. */
  offloaded(): number;
  close(): Promise<void>;
}

export function offloadSteps(entry: URL, slice: StepSlice = SERVING_SLICE): Offload {
  const thread = new StepThread(entry);
  offloadHeavySteps(slice, {
    step: (program, execution, run, event) => thread.step(program, execution, run, event),
    evaluate: (expression, input, bindings) => thread.evaluate(expression, input, bindings),
  });
  return {
    offloaded: () => thread.offloaded,
    async close() {
      stopOffloading();
      await thread.close();
    },
  };
}

/** `stepwise_steps_offloaded_total` in `registry`: how often a step was too heavy to run inline. */
export function registerOffloadMetrics(registry: Registry, offload: Offload): void {
  new Counter({
    name: "stepwise_steps_offloaded_total",
    help: "Steps whose expressions passed the serving thread's slice and ran on the evaluation thread.",
    registers: [registry],
    collect() {
      this.reset();
      this.inc(offload.offloaded());
    },
  });
}
