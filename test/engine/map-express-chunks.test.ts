import { describe, expect, it } from "vitest";
import type { MapState, StateScope } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { chunkOf, chunkTaskId } from "../../engine/states/map-express-chunk-ids.js";
import {
  CHUNK_ANSWER_BYTES,
  CHUNK_ITEMS,
  chunkOutcomes,
  UNBOUNDED_WINDOW,
} from "../../engine/states/map-express-chunks.js";
import { runExecution } from "../../engine/drivers/memory.js";
import { runChunkItems } from "../../engine/drivers/express-chunk.js";
import { compileProgram } from "../../engine/program.js";
import { forkPlan } from "../../engine/fork.js";
import { redrivePlan } from "../../engine/redrive.js";
import { details, effectsOf, execute, ofType, only, single, Stepper, types } from "./helpers.js";

/**
 * A Distributed Map with an EXPRESS processor: its items run in chunks, each a task
 * of the Map state's own that the driver runs in memory; the parent's history holds
 * the Map Run's events only, and no child execution is kept.
 */
const failOdd: StateScope = {
  StartAt: "Check",
  States: {
    Check: {
      Type: "Choice",
      Choices: [{ Variable: "$.odd", BooleanEquals: true, Next: "Bad" }],
      Default: "Good",
    },
    Good: { Type: "Pass", Parameters: { "n.$": "$.n" }, End: true },
    Bad: { Type: "Fail", Error: "Odd", Cause: "an odd item" },
  },
} as unknown as StateScope;

function distributed(type: "EXPRESS" | "STANDARD", extra: Partial<MapState> = {}): MapState {
  return {
    Type: "Map",
    ItemProcessor: { ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: type }, ...failOdd },
    End: true,
    ...extra,
  } as MapState;
}

const items = (n: number, odd: (i: number) => boolean = () => false): Json[] =>
  Array.from({ length: n }, (_, i) => ({ n: i, odd: odd(i) }));

describe("Distributed Map, EXPRESS processor", () => {
  it("gives the same output as STANDARD children, in item order, without child executions", async () => {
    const input = items(600, (i) => i % 50 === 7);
    const map = { ToleratedFailureCount: 20, MaxConcurrency: 100 };
    const express = await execute(single(distributed("EXPRESS", map)), { input });
    const standard = await execute(single(distributed("STANDARD", map)), { input });
    expect(express.status).toBe("SUCCEEDED");
    expect(express.output).toEqual(standard.output);
    expect((express.output as Json[])[7]).toBeNull();
    expect((express.output as Json[])[8]).toEqual({ n: 8 });
    expect(express.childExecutions.size).toBe(0);
    expect(standard.childExecutions.size).toBe(600);
    // The parent's history: the same Map Run events, nothing per item.
    expect(types(express.history)).toEqual(types(standard.history));
  });

  it("runs at most MaxConcurrency items at once, in chunks no bigger than it", async () => {
    let running = 0;
    let peak = 0;
    const handler = async (input: Json) => {
      running += 1;
      peak = Math.max(peak, running);
      await new Promise((r) => setImmediate(r));
      running -= 1;
      return input;
    };
    const processor = {
      ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
      StartAt: "T",
      States: { T: { Type: "Task", Resource: "arn:local:echo", End: true } },
    };
    const r = await execute(
      single({ Type: "Map", MaxConcurrency: 30, ItemProcessor: processor, End: true } as MapState),
      { input: items(200), tasks: { "arn:local:echo": handler } },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect((r.output as Json[]).length).toBe(200);
    expect(peak).toBeLessThanOrEqual(30);
    expect(peak).toBeGreaterThan(1);
  });

  it("fails the Map past the tolerance, with AWS's error, and aborts nothing it did not start", async () => {
    const r = await execute(single(distributed("EXPRESS", { ToleratedFailureCount: 1 })), {
      input: items(10, (i) => i < 3),
    });
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("States.ExceedToleratedFailureThreshold");
    expect(types(r.history)).toContain("MapRunFailed");
  });

  it("fails the Map with an item's own error when nothing is tolerated", async () => {
    const r = await execute(single(distributed("EXPRESS")), { input: items(5, (i) => i === 3) });
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("Odd");
    expect(details(ofType(r.history, "MapRunFailed")[0]!).error).toBe("Odd");
  });

  it("runs a batch as one item", async () => {
    const processor = {
      ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
      StartAt: "P",
      States: { P: { Type: "Pass", OutputPath: "$.Items", End: true } },
    };
    const r = await execute(
      single({
        Type: "Map",
        ItemBatcher: { MaxItemsPerBatch: 3 },
        ItemProcessor: processor,
        End: true,
      } as MapState),
      { input: [1, 2, 3, 4, 5, 6, 7] },
    );
    expect(r.output).toEqual([[1, 2, 3], [4, 5, 6], [7]]);
  });

  it("succeeds on no items", async () => {
    const r = await execute(single(distributed("EXPRESS")), { input: [] });
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual([]);
  });

  it("redrives only the items that failed, keeping the outputs of those that succeeded", async () => {
    const calls: number[] = [];
    let broken = true;
    const processor = {
      ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
      StartAt: "T",
      States: { T: { Type: "Task", Resource: "arn:local:times10", End: true } },
    };
    const tasks = {
      "arn:local:times10": (input: Json) => {
        calls.push(input as number);
        if (broken && input === 2) throw { error: "Broken", cause: "not yet" };
        return (input as number) * 10;
      },
    };
    const program = compileProgram(
      single({ Type: "Map", ItemProcessor: processor, End: true } as MapState),
    );
    const failed = await runExecution(program, { input: [1, 2, 3], tasks, seed: "s" });
    expect(failed.status).toBe("FAILED");
    expect(failed.error).toBe("Broken");
    broken = false;
    calls.length = 0;
    const plan = redrivePlan(program, failed.execution, failed.journal)!;
    const redriven = await runExecution(program, {
      tasks,
      redrive: { from: failed, plan, redriveCount: 1 },
    });
    expect(redriven.status).toBe("SUCCEEDED");
    expect(redriven.output).toEqual([10, 20, 30]);
    expect(calls).toEqual([2]);
  });

  it("redrives the items that did not succeed in chunks, as its first run ran them, twice over", async () => {
    // 600 items, 60 at once, 3 failures tolerated: items 7, 57, 107 and 157 fail twice,
    // so the first run fails before it started the last items, and so does the first
    // redrive. Each redrive runs what did not succeed (failed, cut short, or never
    // started) in chunks of EXPRESS items, never as iterations of the parent.
    const failures = new Map<number, number>();
    const calls: number[] = [];
    const tasks = {
      "arn:local:work": (input: Json) => {
        const { n } = input as { n: number };
        calls.push(n);
        const left = failures.get(n) ?? 0;
        if (left > 0) {
          failures.set(n, left - 1);
          throw { error: "Broken", cause: `item ${n}` };
        }
        return { n };
      },
    };
    for (const n of [7, 57, 107, 157]) failures.set(n, 2);
    const processor = {
      ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
      StartAt: "Work",
      States: {
        Work: { Type: "Task", Resource: "arn:local:work", Next: "Name" },
        // Each item's own execution name: its Map Run's id and its index in the Map.
        Name: {
          Type: "Pass",
          Parameters: { "n.$": "$.n", "name.$": "$$.Execution.Name" },
          End: true,
        },
      },
    };
    const definition = single({
      Type: "Map",
      MaxConcurrency: 60,
      ToleratedFailureCount: 3,
      ItemSelector: { "n.$": "$$.Map.Item.Value" },
      ItemProcessor: processor,
      End: true,
    } as unknown as MapState);
    const program = compileProgram(definition);
    const input = Array.from({ length: 600 }, (_, i) => i);
    const first = await runExecution(program, { input, tasks, seed: "s" });
    expect(first.status).toBe("FAILED");
    expect(first.error).toBe("States.ExceedToleratedFailureThreshold");
    const ranFirst = new Set(calls);
    expect(ranFirst.size).toBeLessThan(600);

    const chunkAnswers = (r: typeof first) =>
      r.journal.filter(
        (e) => e.event.type === "TaskSucceeded" && /\.c\d+$/.test(String(e.event.taskId)),
      ).length;
    const mapRunArn = details(ofType(first.history, "MapRunStarted")[0]!).mapRunArn as string;
    const mapRunId = mapRunArn.split(":").at(-1)!;
    let previous = first;
    for (const redriveCount of [1, 2]) {
      calls.length = 0;
      const plan = redrivePlan(program, previous.execution, previous.journal)!;
      const retried = plan.point.join!.rerun.map(([i]) => i);
      const redriven = await runExecution(program, {
        tasks,
        redrive: { from: previous, plan, redriveCount },
      });
      // Only what had not succeeded ran again, each item at most once: all of it the
      // second time; the first time, until the items failing again exceed the tolerance.
      expect(new Set(calls).size).toBe(calls.length);
      expect(calls.every((n) => retried.includes(n))).toBe(true);
      if (redriveCount === 1) expect(redriven.error).toBe("States.ExceedToleratedFailureThreshold");
      else expect([...calls].sort((a, b) => a - b)).toEqual(retried);
      // No iteration of the parent: the Map Run's events only, its items in chunks.
      const after = types(redriven.history).slice(types(previous.history).length);
      expect(after.filter((t) => t.startsWith("MapIteration"))).toEqual([]);
      expect(after).toContain("MapRunRedriven");
      expect(redriven.childExecutions.size).toBe(0);
      expect(plan.point.join).toMatchObject({ chunks: true, total: 600 });
      expect(chunkAnswers(redriven) - chunkAnswers(previous)).toBeLessThanOrEqual(
        Math.ceil(retried.length / 60) + 12,
      );
      previous = redriven;
    }
    expect(previous.status).toBe("SUCCEEDED");
    // Every item's output in order, each run as its own index's execution.
    expect(previous.output).toEqual(input.map((n) => ({ n, name: `${mapRunId}-${n}` })));
  });

  it("keeps a chunk's answer near CHUNK_ANSWER_BYTES: large outputs make the next chunks smaller", async () => {
    // 1,000 items, one chunk at a time: the first 250 answer 20 KB each (5 MB in one
    // event), so the chunks after it carry about 1 MiB; then the outputs turn small
    // and the chunks grow back to 250.
    const big = "x".repeat(20_000);
    const processor = {
      ProcessorConfig: { Mode: "DISTRIBUTED", ExecutionType: "EXPRESS" },
      StartAt: "T",
      States: { T: { Type: "Task", Resource: "arn:local:out", End: true } },
    };
    const tasks = {
      "arn:local:out": (input: Json): Json => ((input as number) < 500 ? { big } : { n: input }),
    };
    const program = compileProgram(
      single({
        Type: "Map",
        MaxConcurrency: 250,
        ItemsPath: "$.items",
        ItemProcessor: processor,
        // 10 MB of outputs: more than a state's output may hold (they would go to S3).
        ResultPath: null,
        End: true,
      } as unknown as MapState),
    );
    const input = { items: Array.from({ length: 1000 }, (_, i) => i) };
    const r = await runExecution(program, { input, tasks, seed: "s" });
    expect(r.status, r.cause).toBe("SUCCEEDED");
    const answers = r.journal
      .filter((e) => e.event.type === "TaskSucceeded")
      .map((e) => {
        const outcomes = (e.event as unknown as { output: { outcomes: Json[] } }).output.outcomes;
        return { items: outcomes.length, bytes: JSON.stringify(outcomes).length };
      });
    expect(answers[0]!.items).toBe(250);
    expect(answers[0]!.bytes).toBeGreaterThan(5_000_000);
    // Every later chunk of large outputs stays near the budget.
    for (const answer of answers.slice(1).filter((a) => a.bytes > 20_000 * 10)) {
      expect(answer.bytes).toBeLessThanOrEqual(CHUNK_ANSWER_BYTES + 25_000);
    }
    expect(answers.length).toBeGreaterThan(1 + 250 / 53);
    // Small outputs again: back to whole chunks.
    expect(answers.slice(-3).map((a) => a.items)).toContain(250);
    expect(answers.reduce((n, a) => n + a.items, 0)).toBe(1000);
  });

  it("is pure: chunks as effects, one answer taken once, UpdateMapRun widens, a stop cancels", () => {
    const stepper = new Stepper(
      single(distributed("EXPRESS", { MaxConcurrency: 2, ToleratedFailureCount: 5 })),
      items(7),
    );
    const first = effectsOf(stepper.start(), "RunChunk");
    // Chunks never pass the window: one of 2 items at a time.
    expect(first.map((c) => [c.from, c.count])).toEqual([[0, 2]]);
    expect(first[0]!.processor.definition).toMatchObject({ StartAt: "Check" });
    const answer = (from: number, n: number): Json => ({
      outcomes: Array.from({ length: n }, (_, k) => ({
        status: "SUCCEEDED",
        output: { n: from + k },
      })),
    });
    const ended = stepper.send(stepper.rootId, {
      type: "TaskSucceeded",
      taskId: first[0]!.taskId,
      output: answer(0, 2),
    });
    expect(only(effectsOf(ended, "KeepOutputs")).outputs).toEqual([
      [0, { n: 0 }],
      [1, { n: 1 }],
    ]);
    const second = only(effectsOf(ended, "RunChunk"));
    expect([second.from, second.count]).toEqual([2, 2]);
    // The same answer again (a redelivery): stale, nothing changes.
    const before = stepper.run();
    stepper.send(stepper.rootId, {
      type: "TaskSucceeded",
      taskId: first[0]!.taskId,
      output: answer(0, 2),
    });
    expect(stepper.run()).toBe(before);
    // UpdateMapRun: a window of 5 starts what fits at once (2 running, then 2 and the last 1).
    // (This stepper writes the earlier history shape, without a Map Run ARN.)
    const mapRunArn = stepper.run().current!.mapRunArn as string;
    const widened = effectsOf(
      stepper.send(stepper.rootId, { type: "MapRunUpdated", mapRunArn, maxConcurrency: 5 }),
      "RunChunk",
    );
    expect(widened.map((c) => [c.from, c.count])).toEqual([
      [4, 2],
      [6, 1],
    ]);
    // A stop: every chunk in flight is cancelled.
    const stopped = stepper.send(stepper.rootId, { type: "Stop" });
    expect(effectsOf(stopped, "CancelTask").map((c) => c.taskId)).toEqual([
      second.taskId,
      ...widened.map((c) => c.taskId),
    ]);
    expect(stepper.run().status).toBe("ABORTED");
  });

  it("fails an item that runs past its time limit with States.Timeout, the others go on", async () => {
    const processor = {
      definition: {
        StartAt: "W",
        States: {
          W: {
            Type: "Choice",
            Choices: [{ Variable: "$", NumericEquals: 1, Next: "Long" }],
            Default: "Done",
          },
          Long: { Type: "Wait", Seconds: 60, Next: "Done" },
          Done: { Type: "Pass", End: true },
        },
      } as unknown as Json,
    };
    const result = await runChunkItems(processor, 0, [0, 1], { clock: "real", limitMs: 30 });
    expect(result.outcomes).toEqual([
      { status: "SUCCEEDED", output: 0 },
      { status: "FAILED", error: "States.Timeout", cause: "The execution ran longer than 30 ms" },
    ]);
  });

  it("names chunk tasks after their join and first item, and reads them back", () => {
    const id = chunkTaskId("exec/1", 250);
    expect(chunkOf("exec/1", id)).toBe(250);
    expect(chunkOf("exec/2", id)).toBeUndefined();
    // The task belongs to the Map's run: its id names it before the `#`.
    expect(id.slice(0, id.indexOf("#"))).toBe("exec");
    expect(CHUNK_ITEMS).toBeLessThanOrEqual(500);
    expect(UNBOUNDED_WINDOW).toBeGreaterThanOrEqual(CHUNK_ITEMS);
  });

  it("fails every item of a chunk that answered as a whole with an error, or malformed", () => {
    expect(chunkOutcomes({ kind: "failed", error: "E", cause: "c" }, 2)).toEqual([
      { status: "FAILED", error: "E", cause: "c" },
      { status: "FAILED", error: "E", cause: "c" },
    ]);
    const malformed = chunkOutcomes({ kind: "result", output: { outcomes: [] } }, 1);
    expect(malformed[0]).toMatchObject({ status: "FAILED", error: "States.Runtime" });
  });
});

describe("forking inside an EXPRESS Map Run", () => {
  it("is refused with the reason: its items ran in memory, nothing a fork could take up", async () => {
    // Branch 0 runs the EXPRESS Map; branch 1 enters `Later` while its chunks are out.
    const definition = {
      StartAt: "Both",
      States: {
        Both: {
          Type: "Parallel",
          Branches: [
            { StartAt: "M", States: { M: distributed("EXPRESS", { MaxConcurrency: 50 }) } },
            {
              StartAt: "Quick",
              States: {
                Quick: { Type: "Task", Resource: "quick", Next: "Later" },
                Later: { Type: "Pass", End: true },
              },
            },
          ],
          End: true,
        },
      },
    };
    const program = compileProgram(definition as never);
    const source = await runExecution(program, {
      input: items(600),
      tasks: { quick: () => ({}) },
      seed: "s",
    });
    expect(source.status).toBe("SUCCEEDED");
    const later = source.history.find(
      (e) => e.type === "PassStateEntered" && e.stateEnteredEventDetails?.name === "Later",
    )!;
    // `Later` was entered while the Map Run was still running.
    const runEnded = source.history.find((e) => e.type === "MapRunSucceeded")!;
    expect(later.id).toBeLessThan(runEnded.id);
    const plan = forkPlan(
      program,
      source.execution,
      source.journal,
      source.history,
      later.id,
      undefined,
      "arn:aws:states:local:000000000000:execution:StateMachine:fork",
    );
    expect(plan).toEqual({
      ok: false,
      reason: expect.stringContaining("EXPRESS Map Run of state 'M'"),
    });
  });
});
