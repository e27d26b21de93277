/**
 * Prints how Stepwise agrees with the results recorded against AWS Step Functions
 * in test/conformance/data (or DIR): validation verdicts, then executions (per
 * feature) from three sources: the recorded cases, the recorded task cases (mocked
 * service calls) and the worked examples of AWS's documentation, then whole
 * execution histories: each case of histories.jsonl run again (AWS's history format)
 * and shaped as the AWS endpoint's GetExecutionHistory shapes it, compared event by
 * event (test/conformance/histories.ts), with the first difference of each history
 * that differs, grouped by kind. A report of
 * agreement, not a gate: the test suite is what gates CI.
 * Missing data is an error, though: a report of nothing must not pass for one.
 *
 *   npx tsx scripts/conformance.ts [DIR]
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { HISTORY_FORMAT_AWS } from "../engine/core/history.js";
import { parseCases, runCases, type CaseResult } from "../engine/testing/cases.js";
import { compareHistories, historyReport, parseHistories } from "../test/conformance/histories.js";
import { validationConformance } from "./conformance-validation.js";

const DATA_FILES = [
  "validation.jsonl",
  "cases.jsonl",
  "task-cases.jsonl",
  "docs-examples.jsonl",
  "histories.jsonl",
] as const;

/** The three sources of executions, in the order they are printed. */
const SOURCES = [
  { file: "cases.jsonl", label: "recorded cases (AWS)" },
  { file: "task-cases.jsonl", label: "task cases (AWS, mocked service calls)" },
  { file: "docs-examples.jsonl", label: "docs examples (AWS documentation)" },
] as const;
const dir = process.argv[2] ?? resolve(import.meta.dirname, "../test/conformance/data");

function perFeature(results: CaseResult[]): string[] {
  const byFeature = new Map<string, { pass: number; total: number }>();
  for (const r of results) {
    for (const f of r.features) {
      const e = byFeature.get(f) ?? { pass: 0, total: 0 };
      e.total += 1;
      if (r.passed) e.pass += 1;
      byFeature.set(f, e);
    }
  }
  return [...byFeature.entries()]
    .sort((a, b) => b[1].total - a[1].total)
    .map(
      ([f, e]) =>
        `  ${f.padEnd(16)} ${String(e.pass).padStart(4)}/${String(e.total).padEnd(4)} ${((100 * e.pass) / e.total).toFixed(1)}%`,
    );
}

function summary(label: string, results: CaseResult[]): string[] {
  const pass = results.filter((r) => r.passed).length;
  const causes = results.filter((r) => r.causeMatched).length;
  const nonJsonata = results.filter((r) => !r.features.includes("JSONata"));
  const nonJsonataPass = nonJsonata.filter((r) => r.passed).length;
  const lines = [
    `${label}: ${pass}/${results.length} passed (${((100 * pass) / Math.max(1, results.length)).toFixed(1)}%), ` +
      `causes matched to the letter: ${causes}; without JSONata: ${nonJsonataPass}/${nonJsonata.length}`,
    ...perFeature(results),
  ];
  for (const r of results) if (!r.passed) lines.push(`  FAIL ${r.id}: ${r.difference}`);
  return lines;
}

async function main(): Promise<void> {
  const missing = DATA_FILES.filter((file) => !existsSync(join(dir, file)));
  if (missing.length > 0) {
    console.error(`stepwise conformance: no ${missing.join(", ")} in ${dir}`);
    process.exitCode = 1;
    return;
  }
  for (const line of await validationConformance(dir)) console.log(line);
  for (const { file, label } of SOURCES) {
    const cases = parseCases(readFileSync(join(dir, file), "utf8"));
    const results = await runCases(cases, { clock: "virtual", concurrency: 1 });
    console.log(`== ${label}`);
    for (const line of summary(file, results)) console.log(line);
  }
  console.log("== execution histories (AWS, GetExecutionHistory event by event)");
  const histories = await compareHistories(
    parseHistories(readFileSync(join(dir, "histories.jsonl"), "utf8")),
    parseCases(readFileSync(join(dir, "cases.jsonl"), "utf8")),
    { run: { historyFormat: HISTORY_FORMAT_AWS } },
  );
  for (const line of historyReport(histories)) console.log(line);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
