import { fileURLToPath } from "node:url";
import { didYouMean } from "./args.js";
import { EXIT, execute, type Command, type CommandIO } from "./command.js";
import { loadWithCodeCache, type CompiledBundle } from "./compile-cache.js";

/**
 * The commands, each loaded only when it runs: `stepwise executions list` does not
 * load fastify, BullMQ and the engine that `serve` needs, so a client command or
 * `--help` starts in a fraction of the time.
 */
interface CommandEntry {
  name: string;
  /** One line for `stepwise --help`. */
  summary: string;
  load(): Promise<Command>;
  /** In the local commands' bundle (cli/local.ts), loaded through the code cache when built. */
  local?: true;
}

const COMMANDS: readonly CommandEntry[] = [
  {
    name: "validate",
    local: true,
    summary: "check definitions for errors, as AWS would",
    load: async () => (await import("./commands/validate.js")).validateCommand,
  },
  {
    name: "run",
    local: true,
    summary: "run a state machine locally and print its output",
    load: async () => (await import("./commands/run.js")).runCommand,
  },
  {
    name: "test",
    local: true,
    summary: "run test cases (definition, input, expected result, mocks) locally",
    load: async () => (await import("./commands/test.js")).testCommand,
  },
  {
    name: "serve",
    summary: "run the REST API (and a worker) on Redis",
    load: async () => (await import("./commands/serve.js")).serveCommand,
  },
  {
    name: "worker",
    summary: "run a durable worker against Redis (REDIS_URL)",
    load: async () => (await import("./commands/worker.js")).workerCommand,
  },
  {
    name: "machines",
    summary: "list, show, create or update state machines on a running service",
    load: async () => (await import("./commands/machines.js")).machinesCommand,
  },
  {
    name: "executions",
    summary:
      "list, start, stop, pause, resume, restart, purge or watch executions on a running service",
    load: async () => (await import("./commands/executions.js")).executionsCommand,
  },
  {
    name: "approvals",
    summary: "list, show, approve or reject approvals on a running service",
    load: async () => (await import("./commands/approvals.js")).approvalsCommand,
  },
  {
    name: "schedules",
    summary: "list, get, create, delete or backfill schedules on a running service",
    load: async () => (await import("./commands/schedules.js")).schedulesCommand,
  },
  {
    name: "rules",
    summary: "list, get, create or delete event rules on a running service",
    load: async () => (await import("./commands/rules.js")).rulesCommand,
  },
  {
    name: "audit",
    summary: "verify a signed audit export of an execution, offline",
    load: async () => (await import("./commands/audit.js")).auditCommand,
  },
  {
    name: "config",
    summary: "print the configuration in force (secrets masked) and check it",
    load: async () => (await import("./commands/config.js")).configCommand,
  },
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
  const entry = COMMANDS.find((c) => c.name === name);
  if (!entry) {
    const hint = didYouMean(
      name,
      COMMANDS.map((c) => c.name),
    );
    io.stderr(`stepwise: unknown command '${name}'${hint}\nsee 'stepwise --help'\n`);
    return EXIT.usage;
  }
  // Each command keeps its own cache: the functions it runs, compiled.
  const usage = rest.includes("--help") || rest.includes("-h");
  const local = entry.local ? localBundle(usage ? "help" : name) : undefined;
  if (local === undefined) return execute(name, await entry.load(), rest, io);
  const runLocal = local.exports.runLocal as typeof import("./local.js").runLocal;
  const code = await runLocal(name, rest, io, (specifier) => import(specifier));
  local.saveCache();
  return code;
}

/**
 * The local commands' bundle, in the built CLI (scripts/build.ts names it in
 * __stepwiseLocalBundle, with its content's hash); undefined when running from the
 * sources.
 */
declare const __stepwiseLocalBundle: string | undefined;

function localBundle(cacheKey: string): CompiledBundle | undefined {
  if (typeof __stepwiseLocalBundle !== "string") return undefined;
  const file = fileURLToPath(new URL(`./${__stepwiseLocalBundle}`, import.meta.url));
  return loadWithCodeCache(file, cacheKey);
}
