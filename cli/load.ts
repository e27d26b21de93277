import { readFile } from "node:fs/promises";
import type { StateMachineDefinition } from "../engine/core/definition.js";
import { validateDefinition } from "../schema/index.js";
import { UsageError, type CommandIO } from "./command.js";

/** Reads and validates a definition file; prints the diagnostics and returns undefined when invalid. */
export async function loadDefinitionFile(
  file: string,
  io: CommandIO,
): Promise<StateMachineDefinition | undefined> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    // A path that is not there is a mistake on the command line (exit 2), not a verdict.
    throw new UsageError(`cannot read '${file}': ${(err as Error).message}`, false);
  }
  const format = /\.ya?ml$/i.test(file) ? "yaml" : "json";
  const result = validateDefinition(text, { format });
  const errors = result.diagnostics.filter((d) => d.severity === "error");
  if (!result.valid || !result.definition) {
    for (const d of errors) {
      const where = d.line !== undefined ? `${file}:${d.line}:${d.column ?? 1}` : file;
      io.stderr(`${where}: error ${d.code} ${d.message} (${d.path || "/"})\n`);
    }
    return undefined;
  }
  return result.definition;
}
