import { readFile, stat } from "node:fs/promises";
import { diagnostic, type Diagnostic } from "../../schema/diagnostic.js";
import { validateDefinition, type Substitutions } from "../../schema/index.js";
import { MAX_DEFINITION_BYTES } from "../../schema/source/limits.js";
import { parseArgs } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";

const usage = `Usage: stepwise validate [--json] [--type STANDARD|EXPRESS]
                         [--sub NAME=VALUE]... [--subs FILE.json] FILE...

Checks Amazon States Language definitions (.json, .yaml or .yml) the way AWS's
ValidateStateMachineDefinition does, and prints each problem as
  FILE:LINE:COLUMN: SEVERITY CODE message (JSON pointer)

Options:
  --json        print one JSON array [{file, valid, diagnostics}] instead
  --type TYPE   check for a STANDARD (default) or EXPRESS state machine
  --sub N=V     fill the placeholder \${N} with V before parsing, as SAM's
                DefinitionSubstitutions do (repeatable; wins over --subs)
  --subs FILE   a JSON object of placeholder values, {"N": "V", ...}
                Placeholders left unfilled are UNRESOLVED_PLACEHOLDER warnings.

Exit codes: 0 every file is valid, 1 some file is not (or cannot be read),
2 usage error.`;

interface FileReport {
  file: string;
  valid: boolean;
  diagnostics: Diagnostic[];
}

export const validateCommand: Command = {
  name: "validate",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, {
      flags: ["json"],
      values: ["type", "subs"],
      repeatable: ["sub"],
    });
    const files = args.positionals;
    if (files.length === 0) throw new UsageError("validate needs at least one FILE");
    const flagLike = files.find((f) => f.startsWith("-") && f !== "-");
    if (flagLike !== undefined) throw new UsageError(`unknown option '${flagLike}'`);
    const type = args.values.get("type") ?? "STANDARD";
    if (type !== "STANDARD" && type !== "EXPRESS") {
      throw new UsageError(`--type must be STANDARD or EXPRESS, got '${type}'`);
    }

    const substitutions = await substitutionsOf(args.values.get("subs"), args.lists.get("sub"));
    const reports: FileReport[] = [];
    for (const file of files) reports.push(await validateFile(file, type, substitutions));

    if (args.flags.has("json")) {
      io.stdout(JSON.stringify(reports, null, 2) + "\n");
    } else {
      for (const report of reports) io.stdout(formatReport(report));
    }
    return reports.every((r) => r.valid) ? EXIT.ok : EXIT.failed;
  },
};

/** `--subs FILE.json` then each `--sub NAME=VALUE` (later wins); values are text, as in SAM. */
async function substitutionsOf(
  file: string | undefined,
  pairs: readonly string[] = [],
): Promise<Substitutions> {
  const out: Record<string, string> = {};
  if (file !== undefined) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(await readFile(file, "utf8"));
    } catch (error) {
      throw new UsageError(`--subs ${file}: ${(error as Error).message}`);
    }
    if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
      throw new UsageError(`--subs ${file}: expected a JSON object {"Name": "value", ...}`);
    }
    for (const [name, value] of Object.entries(parsed)) {
      out[name] = typeof value === "string" ? value : JSON.stringify(value);
    }
  }
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new UsageError(`--sub needs NAME=VALUE, got '${pair}'`);
    out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

async function validateFile(
  file: string,
  type: "STANDARD" | "EXPRESS",
  substitutions: Substitutions,
): Promise<FileReport> {
  let bytes: Buffer;
  try {
    // Refuse oversized files before reading them into memory.
    const info = await stat(file);
    if (!info.isFile()) return unreadable(file, "it is not a regular file");
    if (info.size > MAX_DEFINITION_BYTES) {
      return unreadable(
        file,
        `it is ${info.size} bytes; the limit is ${MAX_DEFINITION_BYTES} bytes (1 MiB)`,
        "DEFINITION_TOO_LARGE",
      );
    }
    bytes = await readFile(file);
  } catch (error) {
    return unreadable(file, (error as Error).message);
  }
  const format = /\.ya?ml$/i.test(file) ? "yaml" : /\.json$/i.test(file) ? "json" : undefined;
  const result = validateDefinition(bytes, { ...(format ? { format } : {}), type, substitutions });
  return { file, valid: result.valid, diagnostics: result.diagnostics };
}

function unreadable(
  file: string,
  why: string,
  code: "UNREADABLE_FILE" | "DEFINITION_TOO_LARGE" = "UNREADABLE_FILE",
): FileReport {
  return {
    file,
    valid: false,
    diagnostics: [diagnostic(code, `Cannot read the file: ${why}`, "")],
  };
}

function formatReport(report: FileReport): string {
  if (report.diagnostics.length === 0) return `${report.file}: valid\n`;
  return report.diagnostics
    .map((d) => {
      const where =
        d.line !== undefined ? `${report.file}:${d.line}:${d.column ?? 1}` : report.file;
      return `${where}: ${d.severity} ${d.code} ${d.message} (${d.path || "/"})\n`;
    })
    .join("");
}
