/** One `stepwise` sub-command. `run` returns the process exit code. */
export interface Command {
  name: string;
  /** One line for `stepwise --help`. */
  summary: string;
  /** Full usage text for `stepwise <name> --help`. */
  usage: string;
  run(argv: string[], io: CommandIO): Promise<number>;
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
 * A usage error: the command line itself was wrong (exit 2). `showUsage: false` for
 * errors that the usage text would not help with, such as a path that does not exist.
 */
export class UsageError extends Error {
  constructor(
    message: string,
    readonly showUsage = true,
  ) {
    super(message);
  }
}
