import { describe, expect, it } from "vitest";
import { runCases } from "../../engine/testing/cases.js";
import { loadCases } from "./load.js";

// Regression gate on the executions recorded against AWS Step Functions: the
// in-memory driver must reproduce every recorded status, error name and output.
describe("conformance with AWS-recorded executions", () => {
  for (const file of ["cases.jsonl", "task-cases.jsonl"] as const) {
    it(`passes every case of ${file} outside JSONata`, async () => {
      const cases = loadCases(file).filter((c) => !(c.features ?? []).includes("JSONata"));
      const results = await runCases(cases, { concurrency: 1 });
      const failures = results.filter((r) => !r.passed).map((r) => `${r.id}: ${r.difference}`);
      expect(failures).toEqual([]);
      expect(results.length).toBeGreaterThan(40);
    });
  }
});
