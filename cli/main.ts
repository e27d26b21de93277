import { didYouMean } from "./args.js";
import { CommandFailure, EXIT, UsageError, type Command, type CommandIO } from "./command.js";
import { approvalsCommand } from "./commands/approvals.js";
import { auditCommand } from "./commands/audit.js";
import { configCommand } from "./commands/config.js";
import { executionsCommand } from "./commands/executions.js";
import { machinesCommand } from "./commands/machines.js";
import { runCommand } from "./commands/run.js";
import { serveCommand } from "./commands/serve.js";
import { workerCommand } from "./commands/worker.js";
import { testCommand } from "./commands/test.js";
import { validateCommand } from "./commands/validate.js";

const COMMANDS: Command[] = [
  validateCommand,
  runCommand,
  testCommand,
  serveCommand,
  workerCommand,
  machinesCommand,
  executionsCommand,
  approvalsCommand,
  auditCommand,
  configCommand,
];

function help(): string {
  const width = Math.max(...COMMANDS.map((c) => c.name.length));
  return [
    "stepwise: run and check Amazon States Language state machines",
    "",
    "Usage: stepwise <command> [options]",
    "",
    "Commands:",
    ...COMMANDS.map((c) => `  ${c.name.padEnd(width)}  ${c.summary}`),
    "",
    "Run `stepwise <command> --help` for a command's options.",
    "Exit codes: 0 success, 1 the checked thing failed, 2 usage error.",
  ].join("\n");
}

/**
 * Runs one command line. A usage error is one line and a pointer to `--help` (exit 2);
 * a failure outside the command line (a service that cannot be reached) is one line
 * (exit 1). Anything else is thrown: a bug, whose stack bin/stepwise.js prints.
 */
export async function main(argv: string[], io: CommandIO): Promise<number> {
  const [first, ...after] = argv;
  // `stepwise help executions` is `stepwise executions --help`, as in git.
  const [name, ...rest] = first === "help" && after.length > 0 ? [after[0]!, "--help"] : argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(help() + "\n");
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    const hint = didYouMean(
      name,
      COMMANDS.map((c) => c.name),
    );
    io.stderr(`stepwise: unknown command '${name}'${hint}\nsee 'stepwise --help'\n`);
    return EXIT.usage;
  }
  if (rest.includes("--help") || rest.includes("-h")) {
    io.stdout(command.usage + "\n");
    return EXIT.ok;
  }
  try {
    return await command.run(rest, io);
  } catch (err) {
    if (err instanceof UsageError) {
      const pointer = err.pointToHelp ? `see 'stepwise ${name} --help'\n` : "";
      io.stderr(`stepwise ${name}: ${err.message}\n${pointer}`);
      return EXIT.usage;
    }
    if (err instanceof CommandFailure) {
      io.stderr(`stepwise ${name}: ${err.message}\n`);
      return EXIT.failed;
    }
    throw err;
  }
}
