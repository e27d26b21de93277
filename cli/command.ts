/** One `stepwise` sub-command. `run` returns the process exit code. */
export interface Command {
  name: string;
  /** Full usage text for `stepwise <name> --help`. */
  usage: string;
  run(argv: string[], io: CommandIO): Promise<number>;
}

/** One action of a command group (`executions list`), with its line for a bare `stepwise executions`. */
export interface Action {
  name: string;
  summary: string;
}

export interface CommandIO {
  stdout(text: string): void;
  stderr(text: string): void;
  /** stderr is a terminal: progress may be drawn there. */
  isTTY?: boolean;
  /** stdout is a terminal: tables may be coloured. */
  stdoutTTY?: boolean;
}

/** Exit codes shared by every command. */
export const EXIT = { ok: 0, failed: 1, usage: 2 } as const;

/**
 * A usage error: the command line (or a setting) was wrong (exit 2). Printed as its
 * message and then `see 'stepwise <command> --help'`; `pointToHelp: false` for errors
 * the usage text would not help with, such as a path that does not exist.
 */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly pointToHelp = true,
  ) {
    super(message);
  }
}

/**
 * A failure the person can act on that is not in the command line, such as a service
 * that cannot be reached: printed as its one-line message (exit 1), never as a stack.
 */
export class CommandFailure extends Error {}

/**
 * Runs `command` (the one `stepwise <name>` names) on the rest of the command line:
 * its usage for `--help`, else its exit code. A usage error is one line and a pointer
 * to `--help` (exit 2); a failure outside the command line (a service that cannot be
 * reached) is one line (exit 1). Anything else is thrown: a bug, whose stack
 * bin/stepwise.js prints. Shared by cli/main.ts and the local commands' bundle
 * (cli/local.ts), which has its own copies of these classes.
 */
export async function execute(
  name: string,
  command: Command,
  rest: string[],
  io: CommandIO,
): Promise<number> {
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
