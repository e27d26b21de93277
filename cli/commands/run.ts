import { readFile } from "node:fs/promises";
import { pathToFileURL } from "node:url";
import { resolve } from "node:path";
import type { Json } from "../../engine/core/json.js";
import { runExecution, type MockResponse, type TaskHandlers } from "../../engine/drivers/memory.js";
import { numberOption, parseArgs } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";
import { loadDefinitionFile } from "../load.js";

const usage = `Usage: stepwise run FILE [--input JSON | --input-file F] [options]

Runs a state machine in-process and prints its output (exit 0), or its error and
cause (exit 1). Task states call handlers from --tasks or take --mocks responses.

Options:
  --input JSON        the execution input (default {})
  --input-file F      read the execution input from a JSON file
  --history           print the history events (JSON lines) to stderr
  --time-scale N      run waits and retry backoffs N times faster (default 1)
  --virtual           jump over waits instead of sleeping them
  --tasks MODULE      a JS module whose exports map Resource names to handlers
  --mocks FILE        JSON: {"<Task state name>": [{"Return": ...} | {"Throw": {...}}]}
  --name NAME         the execution name ($$.Execution.Name)`;

async function readJson(path: string, what: string): Promise<Json> {
  let text: string;
  try {
    text = await readFile(path, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read ${what} '${path}': ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as Json;
  } catch (err) {
    throw new UsageError(`${what} '${path}' is not JSON: ${(err as Error).message}`);
  }
}

export const runCommand: Command = {
  name: "run",
  summary: "run a state machine locally and print its output",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      flags: ["history", "virtual"],
      values: ["input", "input-file", "time-scale", "tasks", "mocks", "name"],
    });
    if (args.positionals.length !== 1) throw new UsageError("run takes exactly one FILE");
    if (args.values.has("input") && args.values.has("input-file")) {
      throw new UsageError("give --input or --input-file, not both");
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
    const loaded = await loadDefinitionFile(args.positionals[0]!, io);
    if (!loaded) return EXIT.failed;
    let tasks: TaskHandlers | undefined;
    const tasksModule = args.values.get("tasks");
    if (tasksModule !== undefined) {
      const mod = (await import(pathToFileURL(resolve(tasksModule)).href)) as Record<
        string,
        unknown
      >;
      tasks = (mod.default ?? mod) as TaskHandlers;
    }
    const mocksFile = args.values.get("mocks");
    const mocks = mocksFile
      ? ((await readJson(mocksFile, "mocks file")) as Record<string, MockResponse[]>)
      : undefined;
    const name = args.values.get("name");
    const result = await runExecution(loaded, {
      input,
      clock: args.flags.has("virtual") ? "virtual" : "real",
      timeScale,
      ...(tasks ? { tasks } : {}),
      ...(mocks ? { mocks } : {}),
      ...(name ? { executionName: name } : {}),
    });
    if (args.flags.has("history")) {
      for (const event of result.history) io.stderr(JSON.stringify(event) + "\n");
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
