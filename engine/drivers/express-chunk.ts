import type { StateMachineDefinition } from "../core/definition.js";
import type { ChunkProcessor } from "../core/effects.js";
import type { Json } from "../core/json.js";
import { compileProgram, type Program } from "../program.js";
import { mapRunChildExecution } from "../states/map-child-executions.js";
import type { ChunkResult, ItemOutcome } from "../states/map-express-chunks.js";
import { runExecution, type MemoryRunOptions } from "./memory.js";

/**
 * Runs the items of a chunk (engine/states/map-express-chunks.ts) as Express
 * executions of the Map's ItemProcessor, in memory, all at once, and answers
 * their outcomes in item order. Nothing of them is kept but the outcomes: no
 * history, no record (AWS keeps none for Express children). Used by the in-memory
 * driver and by the worker (runtime/map-runs/express-chunks.ts) alike.
 */

/** Compiled processors by their definition's text: a Map Run's chunks share one. */
const compiled = new Map<string, Program>();
const COMPILED_KEEP = 32;

function programOf(definition: Json): Program {
  const text = JSON.stringify(definition);
  let program = compiled.get(text);
  if (!program) {
    program = compileProgram(definition as unknown as StateMachineDefinition);
    if (compiled.size >= COMPILED_KEEP) compiled.delete(compiled.keys().next().value!);
    compiled.set(text, program);
  }
  return program;
}

export type ChunkRunOptions = Pick<MemoryRunOptions, "tasks" | "clock" | "timeScale"> & {
  /** An item running longer fails with States.Timeout (AWS ends Express executions at 5 minutes). */
  limitMs?: number;
};

export async function runChunkItems(
  processor: ChunkProcessor,
  from: number,
  inputs: readonly Json[],
  options: ChunkRunOptions = {},
): Promise<ChunkResult> {
  const program = programOf(processor.definition);
  const outcomes = await Promise.all(
    // A redriven Map Run's chunk names the Map's indices of its items (not from, from + 1, …).
    inputs.map((input, k) =>
      runItem(program, processor, processor.indices?.[k] ?? from + k, input, options),
    ),
  );
  return { outcomes };
}

async function runItem(
  program: Program,
  processor: ChunkProcessor,
  index: number,
  input: Json,
  options: ChunkRunOptions,
): Promise<ItemOutcome> {
  const child =
    processor.mapRunArn !== undefined
      ? mapRunChildExecution(processor.mapRunArn, index)
      : undefined;
  const { limitMs, ...driver } = options;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const run = runExecution(program, {
      ...driver,
      input,
      executionName: child?.name ?? String(index),
      ...(child ? { executionArn: child.arn } : {}),
      // Only the outcome is read (see above): no history or journal kept.
      keepHistory: false,
    });
    const result =
      limitMs === undefined
        ? await run
        : await Promise.race([
            run,
            new Promise<"timeout">((resolve) => (timer = setTimeout(resolve, limitMs, "timeout"))),
          ]);
    if (result === "timeout") {
      // The run cannot be interrupted mid-state; its outcome is ignored from here on.
      run.catch(() => undefined);
      return {
        status: "FAILED",
        error: "States.Timeout",
        cause: `The execution ran longer than ${limitMs} ms`,
      };
    }
    if (result.status === "SUCCEEDED")
      return { status: "SUCCEEDED", output: result.output ?? null };
    if (result.status === "ABORTED") return { status: "ABORTED" };
    const failed: ItemOutcome = { status: "FAILED" };
    const error = result.error ?? (result.status === "TIMED_OUT" ? "States.Timeout" : undefined);
    if (error !== undefined) failed.error = error;
    if (result.cause !== undefined) failed.cause = result.cause;
    return failed;
  } catch (err) {
    // A processor that loops past the driver's limit: the item fails, the chunk goes on.
    return {
      status: "FAILED",
      error: "States.Runtime",
      cause: err instanceof Error ? err.message : String(err),
    };
  } finally {
    clearTimeout(timer);
  }
}
