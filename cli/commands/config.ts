import {
  ConfigError,
  describeConfig,
  loadConfig,
  processEnvironment,
  VARIABLES,
} from "../../config/index.js";
import { parseArgs } from "../args.js";
import { EXIT, UsageError, type Command } from "../command.js";

const usage = `Usage: stepwise config [--json]

Prints the configuration \`stepwise serve\` and \`stepwise worker\` would run with
in this environment: every variable, its value in force (secrets masked) and
whether it was set or is the default. A bad value is named on one line and the
command exits 2, as serve and worker would.

Options:
  --json   one JSON object per variable: {"name", "value", "source"}`;

export const configCommand: Command = {
  name: "config",
  usage,
  async run(argv, io) {
    const args = parseArgs(argv, { flags: ["json"] });
    if (args.positionals.length > 0) throw new UsageError("config takes no positional arguments");
    const env = processEnvironment();
    try {
      loadConfig(env);
    } catch (err) {
      if (err instanceof ConfigError) {
        io.stderr(`stepwise config: ${err.message}\n`);
        return EXIT.usage;
      }
      throw err;
    }
    const rows = describeConfig(env);
    if (args.flags.has("json")) {
      for (const row of rows) io.stdout(JSON.stringify(row) + "\n");
      return EXIT.ok;
    }
    const width = Math.max(...VARIABLES.map((v) => v.name.length));
    for (const row of rows) {
      const mark = row.source === "default" ? "  (default)" : "";
      io.stdout(`${row.name.padEnd(width)}  ${row.value}${mark}\n`);
    }
    return EXIT.ok;
  },
};
