/**
 * Transitions per second of a 1,000-state JSONata chain (one Assign and one Output
 * with $merge per state) next to the JSONPath chain of bench/interpreter.ts.
 *   npx tsx bench/jsonata.ts
 * Wall-clock figures: run it on a quiet machine.
 */
import type { State, StateMachineDefinition } from "../engine/core/definition.js";
import { runExecution } from "../engine/drivers/memory.js";
import { compileProgram, type Program } from "../engine/program.js";

const N = 1000;

function chain(make: (i: number) => State): StateMachineDefinition {
  const states: Record<string, State> = {};
  for (let i = 0; i < N; i++) {
    states[`S${i}`] = {
      ...make(i),
      ...(i + 1 < N ? { Next: `S${i + 1}` } : { End: true }),
    } as State;
  }
  return { StartAt: "S0", States: states };
}

const jsonata = chain(
  () =>
    ({
      Type: "Pass",
      QueryLanguage: "JSONata",
      Assign: { n: "{% $states.input.n + 1 %}" },
      Output: "{% $merge([$states.input, {'n': $states.input.n + 1, 'a': $states.input.a}]) %}",
    }) as State,
);

const jsonPath = chain(
  () =>
    ({
      Type: "Pass",
      Parameters: { "sum.$": "States.MathAdd($.n, 1)", "a.$": "$.a", "b.$": "$.b" },
      ResultPath: "$.out",
    }) as State,
);

async function measure(name: string, program: Program, rounds: number): Promise<void> {
  const input = { n: 1, a: "x", b: [1, 2] };
  await runExecution(program, { input, clock: "virtual", seed: "warm" });
  const rates: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const t0 = performance.now();
    const result = await runExecution(program, { input, clock: "virtual", seed: `r${r}` });
    const ms = performance.now() - t0;
    if (result.status !== "SUCCEEDED") throw new Error(`${name}: ${result.error} ${result.cause}`);
    rates.push(N / (ms / 1000));
  }
  rates.sort((a, b) => a - b);
  const median = Math.round(rates[Math.floor(rates.length / 2)]!).toLocaleString("en-US");
  console.log(`${name.padEnd(40)} ${median.padStart(9)} transitions/s (median of ${rounds})`);
}

await measure("JSONata chain (Assign + Output $merge)", compileProgram(jsonata), 15);
await measure("JSONPath chain (Parameters + MathAdd)", compileProgram(jsonPath), 15);
