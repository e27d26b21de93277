import { readFile } from "node:fs/promises";
import type { Json } from "../../engine/core/json.js";
import { runExecution, type MockResponse, type TaskHandlers } from "../../engine/drivers/memory.js";
import { numberOption, parseArgs } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";
import { historyTable } from "../history-table.js";
import { loadDefinitionFile } from "../load.js";
import { RunProgress } from "../progress.js";
import { loadTasksModule, memoryTaskHandlers } from "../tasks-module.js";

const usage = `Usage: stepwise run FILE [--input JSON | --input-file F] [options]

Validates a state machine, runs it in-process and prints its output (exit 0), or
its error and cause (exit 1). Task states call handlers from --tasks or take
--mocks responses. On a terminal it shows the current state and the time taken.

Options:
  --input JSON        the execution input (default {})
  --input-file F      read the execution input from a JSON file
  --history           print the history to stderr as a table (with --json: JSON lines)
  --json              with --history: one JSON history event per line
  --time-scale N      run waits and retry backoffs N times faster (default 1)
  --virtual           jump over waits instead of sleeping them
  --tasks MODULE      a JS module serving Task resources: each named function export
                      <name> serves function:<name>; a default export object maps
                      Resource strings (e.g. arn:aws:states:::lambda:invoke) to functions
  --mocks FILE        JSON: {"<Task state name>": [{"Return": ...} | {"Throw": {...}}]}
  --name NAME         the execution name ($$.Execution.Name)

Exit codes: 0 succeeded, 1 failed (or the definition is invalid), 2 usage error
(including a FILE, --input-file, --mocks or --tasks path that does not exist).`;

async function readJson(path: string, what: string): Promise<Json> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${what} '${path}': ${(err as Error).message}`, false);
  }
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new UsageError(`${what} '${path}' is not JSON: ${(err as Error).message}`, false);
  }
}

export const runCommand: Command = {
  name: "run",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      flags: ["history", "virtual", "json"],
      values: ["input", "input-file", "time-scale", "tasks", "mocks", "name"],
    });
    if (args.positionals.length !== 1) throw new UsageError("run takes exactly one FILE");
    if (args.values.has("input") && args.values.has("input-file")) {
      throw new UsageError("give --input or --input-file, not both");
    }
    if (args.flags.has("json") && !args.flags.has("history")) {
      throw new UsageError("--json goes with --history");
    }
    let input: Json = {};
    const inline = args.values.get("input");
    if (inline !== undefined) {
      try {
        input = JSON.parse(inline) as Json;
      } catch (err) {
        throw new UsageError(`--input is not JSON: ${(err as Error).message}`);
      }
    }
    const inputFile = args.values.get("input-file");
    if (inputFile !== undefined) input = await readJson(inputFile, "input file");
    const timeScale = numberOption(args, "time-scale", Number.MIN_VALUE) ?? 1;
    const tasksModule = args.values.get("tasks");
    const tasks: TaskHandlers | undefined =
      tasksModule === undefined
        ? undefined
        : memoryTaskHandlers(await loadTasksModule(tasksModule, "--tasks"));
    const mocksFile = args.values.get("mocks");
    const mocks = mocksFile
      ? ((await readJson(mocksFile, "mocks file")) as Record<string, MockResponse[]>)
      : undefined;
    // Validated before anything runs: an invalid definition exits 1 with its diagnostics.
    const loaded = await loadDefinitionFile(args.positionals[0]!, io);
    if (!loaded) return EXIT.failed;
    const name = args.values.get("name");
    const progress = io.isTTY ? new RunProgress((text) => io.stderr(text)) : undefined;
    let result;
    try {
      result = await runExecution(loaded, {
        input,
        clock: args.flags.has("virtual") ? "virtual" : "real",
        timeScale,
        ...(tasks ? { tasks } : {}),
        ...(mocks ? { mocks } : {}),
        ...(name ? { executionName: name } : {}),
        ...(progress
          ? {
              onHistory: (events) => progress.onHistory(events),
              onSleep: (realMs, executionMs) => progress.onSleep(realMs, executionMs),
            }
          : {}),
      });
    } finally {
      progress?.stop();
    }
    if (args.flags.has("history")) {
      if (args.flags.has("json")) {
        for (const event of result.history) io.stderr(JSON.stringify(event) + "\n");
      } else {
        io.stderr(historyTable(result.history));
      }
    }
    if (result.status === "SUCCEEDED") {
      io.stdout(JSON.stringify(result.output, null, 2) + "\n");
      return EXIT.ok;
    }
    io.stderr(
      `${result.status}\nerror: ${result.error ?? "(none)"}\ncause: ${result.cause ?? "(none)"}\n`,
    );
    return EXIT.failed;
  },
};
