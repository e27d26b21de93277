import { afterAll, describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { runExecution, type MemoryRunOptions } from "../../engine/drivers/memory.js";
import { offloadSteps, type Offload } from "../../runtime/offload/index.js";

/**
 * Heavy steps on the evaluation thread (runtime/offload/), through the in-memory
 * driver as express executions and TestState run them: a step past the serving
 * thread's slice runs on the thread (the real one, from cli/evaluation-thread.ts)
 * and ends exactly as it ends in place, payloads read by reference included.
 */
// The built thread (test/global-build.ts builds dist/ before the suite), as `serve` starts it.
const entry = new URL("../../dist/cli/evaluation-thread.js", import.meta.url);

/** Deterministic runs to compare: fixed names, seed, clock and nonces. */
const FIXED: MemoryRunOptions = {
  executionName: "same",
  seed: "seed",
  startTime: "2026-01-01T00:00:00.000Z",
  nonce: () => "nonce",
};

/** A JSONata loop of ~30,000 evaluation steps (past the slice, well within the budget), then a light state. */
const heavy: StateMachineDefinition = {
  QueryLanguage: "JSONata",
  StartAt: "Sum",
  States: {
    Sum: {
      Type: "Pass",
      Assign: { total: "{% $sum($map([1..3000], function($v) { $v * $states.input.k })) %}" },
      Output: { total: "{% $sum($map([1..3000], function($v) { $v * $states.input.k })) %}" },
      Next: "Done",
    },
    Done: {
      Type: "Pass",
      Output: { total: "{% $total %}", again: "{% $states.input.total %}" },
      End: true,
    },
  },
};

/** A task result stored by reference, read into by a heavy state: the thread asks for the payload. */
const readsReference: StateMachineDefinition = {
  QueryLanguage: "JSONata",
  StartAt: "Fetch",
  States: {
    Fetch: {
      Type: "Task",
      Resource: "fetch",
      Output: { doc: "{% $states.result %}" },
      Next: "Count",
    },
    Count: {
      Type: "Pass",
      Output: {
        as: "{% $count($filter($split($states.input.doc.body, ''), function($c) { $c = 'a' })) %}",
      },
      End: true,
    },
  },
};
const document = { body: "ab".repeat(6_000) };
const payloads = { refOverBytes: 4096, resolveMaxBytes: 1_000_000 };

let offload: Offload | undefined;

async function inPlaceAndOffloaded(
  definition: StateMachineDefinition,
  options: MemoryRunOptions,
): Promise<{
  inPlace: Awaited<ReturnType<typeof runExecution>>;
  offloaded: Awaited<ReturnType<typeof runExecution>>;
  steps: number;
}> {
  const inPlace = await runExecution(definition, { ...FIXED, ...options });
  offload = offloadSteps(entry);
  try {
    const before = offload.offloaded();
    const offloaded = await runExecution(definition, { ...FIXED, ...options });
    return { inPlace, offloaded, steps: offload.offloaded() - before };
  } finally {
    await offload.close();
    offload = undefined;
  }
}

afterAll(async () => {
  await offload?.close();
});

describe("heavy steps on the evaluation thread", () => {
  it("a step past the slice runs on the thread and ends as it does in place", async () => {
    const { inPlace, offloaded, steps } = await inPlaceAndOffloaded(heavy, { input: { k: 2 } });
    expect(inPlace.status).toBe("SUCCEEDED");
    expect(inPlace.output).toEqual({ total: 9_003_000, again: 9_003_000 });
    // Only the heavy state left the thread; the light one ran in place.
    expect(steps).toBe(1);
    expect(offloaded.output).toEqual(inPlace.output);
    expect(offloaded.history).toEqual(inPlace.history);
    expect(offloaded.journal).toEqual(inPlace.journal);
  });

  it("a heavy step reading a payload stored by reference gets it from the driver", async () => {
    const { inPlace, offloaded, steps } = await inPlaceAndOffloaded(readsReference, {
      payloads,
      tasks: { fetch: () => document as unknown as Json },
    });
    expect(inPlace).toMatchObject({ status: "SUCCEEDED", output: { as: 6_000 } });
    expect(steps).toBe(1);
    expect(offloaded.output).toEqual(inPlace.output);
    expect(offloaded.history).toEqual(inPlace.history);
  });

  it("a step past the whole budget fails on the thread as it fails in place", async () => {
    const endless: StateMachineDefinition = {
      QueryLanguage: "JSONata",
      StartAt: "Loop",
      States: {
        Loop: {
          Type: "Pass",
          Output: "{% ($f := function($n) { $f($n + 1) }; $f(0)) %}",
          End: true,
        },
      },
    };
    const { inPlace, offloaded, steps } = await inPlaceAndOffloaded(endless, {});
    expect(inPlace).toMatchObject({ status: "FAILED", error: "States.QueryEvaluationError" });
    expect(steps).toBe(1);
    expect(offloaded).toMatchObject({
      status: inPlace.status,
      error: inPlace.error,
      cause: inPlace.cause,
    });
    expect(offloaded.history).toEqual(inPlace.history);
  });
});
