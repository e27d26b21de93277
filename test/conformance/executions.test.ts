import { describe, expect, it } from "vitest";
import { runCases, type TestCase } from "../../engine/testing/cases.js";
import { validateDefinition } from "../../schema/index.js";
import { loadCases } from "./load.js";

/** docs-examples.jsonl may grow, never shrink below what has been verified. */
const MIN_DOCS_EXAMPLES = 150;
/** Of those, the cases taken from AWS's Step Functions developer guide (issue 18). */
const MIN_DEVELOPER_GUIDE_EXAMPLES = 150;
const DEVELOPER_GUIDE = "https://docs.aws.amazon.com/step-functions/latest/dg/";

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

// The worked examples of AWS's Step Functions documentation (data/README.md): every
// one, JSONata included, must give the output (or error) the documentation shows.
describe("conformance with the examples of AWS's documentation", () => {
  it("passes every case of docs-examples.jsonl", async () => {
    const cases = loadCases("docs-examples.jsonl");
    const results = await runCases(cases, { concurrency: 1 });
    const failures = results.filter((r) => !r.passed).map((r) => `${r.id}: ${r.difference}`);
    expect(failures).toEqual([]);
    expect(results.length).toBeGreaterThanOrEqual(MIN_DOCS_EXAMPLES);
  });

  it("validates every definition of docs-examples.jsonl", () => {
    const invalid = loadCases("docs-examples.jsonl")
      .map((tc) => ({ id: tc.id, result: validateDefinition(tc.definition) }))
      .filter(({ result }) => !result.valid)
      .map(({ id, result }) => `${id}: ${result.diagnostics.map((d) => d.message).join("; ")}`);
    expect(invalid).toEqual([]);
  });

  it(`takes at least ${MIN_DEVELOPER_GUIDE_EXAMPLES} cases from the developer guide`, () => {
    const fromGuide = (loadCases("docs-examples.jsonl") as (TestCase & { source?: unknown })[])
      .filter((tc) => typeof tc.source === "string" && tc.source.startsWith(DEVELOPER_GUIDE))
      .map((tc) => tc.id);
    expect(fromGuide.length).toBeGreaterThanOrEqual(MIN_DEVELOPER_GUIDE_EXAMPLES);
    // Every developer-guide case is named after its page.
    for (const id of fromGuide) expect(id).not.toMatch(/^docs:states-language-spec#/);
  });

  it("names the page and quotes the documented result of every case", () => {
    for (const tc of loadCases("docs-examples.jsonl") as (TestCase & {
      source?: unknown;
      quote?: unknown;
    })[]) {
      expect(tc.id, tc.id).toMatch(/^docs:[a-z0-9-]+#\d+$/);
      expect(tc.source, tc.id).toMatch(/^https:\/\//);
      expect(typeof tc.quote === "string" && tc.quote.length > 0, tc.id).toBe(true);
    }
  });
});
