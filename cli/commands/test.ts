import { readFile, writeFile } from "node:fs/promises";
import {
  parseCases,
  runCases,
  type CaseResult,
  type TestCase,
} from "../../engine/testing/cases.js";
import { numberOption, parseArgs } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";

const usage = `Usage: stepwise test CASES.jsonl [--report FILE] [--real-time] [--concurrency N]

Runs test cases, one JSON object per line:
  {"id", "definition", "input", "expect": {"status": "SUCCEEDED", "output": ...}
                                        | {"status": "FAILED", "error": ..., "cause"?: ...},
   "mocks"?: {"<Task state name>": [{"Return": ...} | {"Throw": {"Error", "Cause"}}, ...]}}
Prints one line per failing case and ends with "N passed, M failed". Exit 0 only
when every case passes. Waits and retry backoffs run on a virtual clock unless
--real-time is given.

Options:
  --report FILE     write one JSON line per case: {"id", "passed", "actual"}
  --real-time       sleep waits and backoffs for real
  --concurrency N   cases run at once (default 8)
  --filter TEXT     only cases whose id contains TEXT`;

export const testCommand: Command = {
  name: "test",
  summary: "run test cases (definition, input, expected result, mocks) locally",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      flags: ["real-time"],
      values: ["report", "concurrency", "filter"],
    });
    if (args.positionals.length !== 1)
      throw new UsageError("test takes exactly one CASES.jsonl file");
    const file = args.positionals[0]!;
    let cases: TestCase[];
    try {
      cases = parseCases(await readFile(file, "utf8"));
    } catch (err) {
      io.stderr(`${file}: ${(err as Error).message}\n`);
      return EXIT.failed;
    }
    const filter = args.values.get("filter");
    if (filter !== undefined) cases = cases.filter((c) => c.id.includes(filter));
    const concurrency = numberOption(args, "concurrency", 1) ?? 8;
    const results = await runCases(cases, {
      clock: args.flags.has("real-time") ? "real" : "virtual",
      concurrency,
    });
    for (const r of results) if (!r.passed) io.stdout(`FAIL ${r.id}: ${r.difference}\n`);
    const report = args.values.get("report");
    if (report !== undefined) await writeFile(report, results.map(reportLine).join(""));
    const passed = results.filter((r) => r.passed).length;
    io.stdout(`${passed} passed, ${results.length - passed} failed\n`);
    return passed === results.length ? EXIT.ok : EXIT.failed;
  },
};

function reportLine(r: CaseResult): string {
  return JSON.stringify({ id: r.id, passed: r.passed, actual: r.actual }) + "\n";
}
