/**
 * Transitions per second of the in-memory driver (one state executed = one transition).
 *   npx tsx bench/interpreter.ts
 * (a) a 1,000-state Pass chain, each state doing Parameters with States.MathAdd and
 *     two path reads into ResultPath; (b) a Choice loop of 5,000 iterations;
 * (c) an inline Map over 2,000 items with a 3-state processor.
 */
import type { State, StateMachineDefinition } from "../engine/core/definition.js";
import { runExecution } from "../engine/drivers/memory.js";
import { compileProgram, type Program } from "../engine/program.js";

function passChain(n: number): StateMachineDefinition {
  const states: Record<string, State> = {};
  for (let i = 0; i < n; i++) {
    states[`S${i}`] = {
      Type: "Pass",
      Parameters: { "sum.$": "States.MathAdd($.n, 1)", "a.$": "$.a", "b.$": "$.b" },
      ResultPath: "$.out",
      ...(i + 1 < n ? { Next: `S${i + 1}` } : { End: true }),
    } as State;
  }
  return { StartAt: "S0", States: states };
}

const choiceLoop: StateMachineDefinition = {
  StartAt: "Init",
  States: {
    Init: { Type: "Pass", Result: { i: 0 }, Next: "Check" },
    Check: {
      Type: "Choice",
      Choices: [{ Variable: "$.i", NumericLessThan: 5000, Next: "Increment" }],
      Default: "Done",
    },
    Increment: { Type: "Pass", Parameters: { "i.$": "States.MathAdd($.i, 1)" }, Next: "Check" },
    Done: { Type: "Succeed" },
  },
};

const inlineMap: StateMachineDefinition = {
  StartAt: "Fan",
  States: {
    Fan: {
      Type: "Map",
      ItemsPath: "$.items",
      ItemProcessor: {
        ProcessorConfig: { Mode: "INLINE" },
        StartAt: "A",
        States: {
          A: { Type: "Pass", Parameters: { "v.$": "$" }, Next: "B" },
          B: { Type: "Pass", ResultPath: "$.b", Result: 1, Next: "C" },
          C: { Type: "Pass", End: true },
        },
      },
      End: true,
    },
  },
};

// Wall-clock figures: run it on a quiet machine (other processes on the two cores skew them).
async function measure(
  name: string,
  program: Program,
  input: unknown,
  rounds: number,
): Promise<void> {
  // Warm-up: let the JIT settle before timing.
  await runExecution(program, { input: input as never, clock: "virtual", seed: "warm" });
  const rates: number[] = [];
  let transitions = 0;
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const result = await runExecution(program, {
      input: input as never,
      clock: "virtual",
      seed: `r${r}`,
    });
    const ms = performance.now() - t0;
    if (result.status !== "SUCCEEDED")
      throw new Error(`${name}: ${result.status} ${result.error} ${result.cause}`);
    transitions = result.history.filter((e) => e.type.endsWith("StateEntered")).length;
    rates.push(transitions / (ms / 1000));
  }
  rates.sort((a, b) => a - b);
  const median = rates[Math.floor(rates.length / 2)]!;
  console.log(
    `${name.padEnd(44)} ${String(transitions).padStart(6)} transitions  ${Math.round(median).toLocaleString("en-US").padStart(9)} /s (median of ${rounds})`,
  );
}

await measure(
  "(a) 1,000-state Pass chain (MathAdd + paths)",
  compileProgram(passChain(1000)),
  { n: 1, a: "x", b: [1, 2] },
  15,
);
await measure("(b) Choice loop, 5,000 iterations", compileProgram(choiceLoop), {}, 9);
await measure(
  "(c) inline Map, 2,000 items x 3 states",
  compileProgram(inlineMap),
  { items: Array.from({ length: 2000 }, (_, i) => ({ id: i })) },
  9,
);
