/**
 * Prints how Stepwise agrees with the results recorded against AWS Step Functions
 * in ../shared/conformance: validation verdicts, then executions (per feature).
 * A report, not a gate: the test suite is what gates CI.
 *
 *   npx tsx scripts/conformance.ts [DIR]
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseCases, runCases, type CaseResult } from "../engine/testing/cases.js";
import { validationConformance } from "./conformance-validation.js";

const dir = process.argv[2] ?? "../shared/conformance";

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
  if (!existsSync(dir)) {
    console.log(`no conformance data at ${dir}`);
    return;
  }
  for (const line of await validationConformance(dir)) console.log(line);
  for (const file of ["cases.jsonl", "task-cases.jsonl"]) {
    const path = join(dir, file);
    if (!existsSync(path)) continue;
    const cases = parseCases(readFileSync(path, "utf8"));
    const results = await runCases(cases, { clock: "virtual", concurrency: 1 });
    for (const line of summary(file, results)) console.log(line);
  }
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
