import { EXIT, UsageError, type Command, type CommandIO } from "./command.js";
import { approvalsCommand } from "./commands/approvals.js";
import { auditCommand } from "./commands/audit.js";
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

export async function main(argv: string[], io: CommandIO): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.stdout(help() + "\n");
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const command = COMMANDS.find((c) => c.name === name);
  if (!command) {
    io.stderr(`stepwise: unknown command '${name}'\n\n${help()}\n`);
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
      io.stderr(`stepwise ${name}: ${err.message}\n${err.showUsage ? `\n${command.usage}\n` : ""}`);
      return EXIT.usage;
    }
    throw err;
  }
}
