import { writeFile } from "node:fs/promises";
import type { CaseResult, TestCase } from "../../engine/testing/cases.js";
import { runCases } from "../../engine/testing/cases.js";
import { formatDifferences } from "../../engine/testing/diff.js";
import { numberOption, parseArgs } from "../args.js";
import { loadCasesFile, type PreparedCase } from "../cases-file.js";
import { EXIT, UsageError, type Command } from "../command.js";

const usage = `Usage: stepwise test CASES.jsonl [--report FILE] [--real-time] [--concurrency N]

Runs test cases, one JSON object per line:
  {"id", "definition": {...} | "FILE.asl.json|yaml" (relative to CASES.jsonl),
   "input"?: ..., "expect": {"status", "output"?, "error"?, "cause"?},
   "mocks"?: {"<Task state name>": [{"Return": ...} | {"Throw": {"Error", "Cause"}}, ...]}}
"expect" checks the status and only what else it names. Each definition is
validated first, and mocks must name states of the definition. Prints each failing
case (with the paths where the output differs) and ends with "N passed, M failed".
Exit 0 only when every case passes. Waits and retry backoffs run on a virtual
clock unless --real-time is given.

Options:
  --report FILE     write one JSON line per case: {"id", "passed", "actual"}
  --real-time       sleep waits and backoffs for real
  --concurrency N   cases run at once (default 8)
  --filter TEXT     only cases whose id contains TEXT`;

interface Outcome {
  id: string;
  passed: boolean;
  lines: string[];
  actual?: CaseResult["actual"];
}

export const testCommand: Command = {
  name: "test",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      flags: ["real-time"],
      values: ["report", "concurrency", "filter"],
    });
    if (args.positionals.length !== 1)
      throw new UsageError("test takes exactly one CASES.jsonl file");
    const file = args.positionals[0]!;
    const filter = args.values.get("filter");
    let prepared: PreparedCase[];
    try {
      prepared = await loadCasesFile(file, filter);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "EISDIR") {
        throw new UsageError(`cannot read cases file '${file}': ${(err as Error).message}`);
      }
      io.stderr(`${file}: ${(err as Error).message}\n`);
      return EXIT.failed;
    }
    const concurrency = numberOption(args, "concurrency", 1) ?? 8;
    const runnable = prepared.filter((p) => p.problems.length === 0).map((p) => p.testCase);
    const results = await runCases(runnable, {
      clock: args.flags.has("real-time") ? "real" : "virtual",
      concurrency,
    });
    const byId = new Map(results.map((r, i) => [runnable[i]!, r]));
    const outcomes = prepared.map((p): Outcome => {
      if (p.problems.length > 0) return { id: p.testCase.id, passed: false, lines: p.problems };
      return judge(p.testCase, byId.get(p.testCase)!);
    });
    for (const o of outcomes) {
      if (o.passed) continue;
      io.stdout(`FAIL ${o.id}\n${o.lines.map((line) => `  ${line}\n`).join("")}`);
    }
    const report = args.values.get("report");
    if (report !== undefined) await writeFile(report, outcomes.map(reportLine).join(""));
    const passed = outcomes.filter((o) => o.passed).length;
    io.stdout(`${passed} passed, ${outcomes.length - passed} failed\n`);
    return passed === outcomes.length ? EXIT.ok : EXIT.failed;
  },
};

/** A case's verdict; a cause the case names must match too (the engine reports it apart). */
function judge(tc: TestCase, r: CaseResult): Outcome {
  const expectedCause = tc.expect.status !== "SUCCEEDED" ? tc.expect.cause : undefined;
  if (r.passed && (expectedCause === undefined || r.causeMatched)) {
    return { id: r.id, passed: true, lines: [], actual: r.actual };
  }
  const lines = r.outputDifferences
    ? ["output differs (path: expected → actual):", ...formatDifferences(r.outputDifferences)]
    : [
        r.difference ??
          `cause ${JSON.stringify(r.actual.cause)}, expected ${JSON.stringify(expectedCause)}`,
      ];
  return { id: r.id, passed: false, lines, actual: r.actual };
}

function reportLine(o: Outcome): string {
  return JSON.stringify({ id: o.id, passed: o.passed, actual: o.actual ?? null }) + "\n";
}
