import { describe, expect, it } from "vitest";
import { runExecution } from "../../engine/drivers/memory.js";
import { compileProgram } from "../../engine/program.js";
import { replay } from "../../engine/replay.js";
import { EXECUTION_FILES, loadCases } from "./load.js";

// Deterministic replay (DESIGN.md, "The one principle"): feeding an execution's
// recorded events back through `step` must rebuild exactly the same run states and
// history, for every execution the conformance suite produces.
describe("deterministic replay of every conformance execution", () => {
  for (const file of EXECUTION_FILES) {
    it(`rebuilds the runs and history of each case in ${file}`, async () => {
      const cases = loadCases(file);
      let replayed = 0;
      for (const tc of cases) {
        const program = compileProgram(tc.definition);
        const result = await runExecution(program, {
          input: tc.input ?? {},
          ...(tc.mocks ? { mocks: tc.mocks } : {}),
          startTime: "2024-01-01T00:00:00.000Z",
          seed: tc.id,
          nonce: (() => {
            let n = 0;
            return () => `nonce-${n++}`;
          })(),
        });
        const rebuilt = replay(program, result.execution, result.journal);
        expect(rebuilt.history, tc.id).toEqual(result.history);
        expect(rebuilt.runs, tc.id).toEqual(result.runs);
        replayed += 1;
      }
      expect(replayed).toBe(cases.length);
    });
  }
});
