import { execute, type Command, type CommandIO } from "./command.js";
import { runCommand } from "./commands/run.js";
import { testCommand } from "./commands/test.js";
import { validateCommand } from "./commands/validate.js";
import { setModuleImporter } from "./tasks-module.js";

/**
 * The commands that run without a service, `validate`, `run` and `test`, as one
 * CommonJS bundle of their own (dist/cli/local-<hash>.cjs, scripts/build.ts), which
 * cli/main.ts loads through V8's code cache (cli/compile-cache.ts): most of what
 * these short processes spent was compiling the ~1 MB of JavaScript they run, every
 * time. The bundle holds its own copy of everything it uses (cli/command.ts's error
 * classes too), so a command runs and fails here exactly as through cli/main.ts.
 */
export const LOCAL_COMMANDS: Readonly<Record<string, Command>> = {
  validate: validateCommand,
  run: runCommand,
  test: testCommand,
};

/**
 * Runs `stepwise <name> ...rest` for one of LOCAL_COMMANDS. `importModule` is the
 * loader's `import()`: code compiled from V8's code cache has none that works on
 * Node 20 (a `vm.Script` restored from cached data loses its dynamic-import
 * callback), so `run --tasks` imports the user's module through it.
 */
export function runLocal(
  name: string,
  rest: string[],
  io: CommandIO,
  importModule: (specifier: string) => Promise<unknown>,
): Promise<number> {
  const command = LOCAL_COMMANDS[name];
  if (command === undefined) throw new Error(`'${name}' is not a local command`);
  setModuleImporter(importModule);
  return execute(name, command, rest, io);
}
