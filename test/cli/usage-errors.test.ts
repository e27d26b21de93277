import { describe, expect, it } from "vitest";
import { didYouMean } from "../../cli/args.js";
import { exited, spawnStepwise } from "../e2e/processes.js";

/**
 * What a newcomer meets first: a usage error is one line and the way to the help (not
 * the whole usage text), a typo gets a suggestion, and a command group given no action
 * lists its actions. Each runs the real CLI process.
 */
async function stepwise(args: string[]): Promise<{ code: number | null; lines: string[] }> {
  const run = spawnStepwise(args, { env: { STEPWISE_URL: undefined } });
  const code = await exited(run.child);
  return { code, lines: run.output().trimEnd().split("\n") };
}

describe("a usage error", () => {
  it.each<[string, string[], string[]]>([
    [
      "an unknown option, with the nearest known one",
      ["executions", "start", "payment", "--inptu", "{}"],
      [
        "stepwise executions: unknown option '--inptu' (did you mean --input?)",
        "see 'stepwise executions --help'",
      ],
    ],
    [
      "an option with one dash",
      ["machines", "list", "-json"],
      [
        "stepwise machines: unknown option '-json' (did you mean --json?)",
        "see 'stepwise machines --help'",
      ],
    ],
    [
      "an unknown option near nothing known",
      ["run", "machine.json", "--bogus"],
      ["stepwise run: unknown option '--bogus'", "see 'stepwise run --help'"],
    ],
    [
      "a mistyped action",
      ["approvals", "aprove", "apr-1"],
      [
        "stepwise approvals: unknown action 'aprove' (did you mean approve?)",
        "see 'stepwise approvals --help'",
      ],
    ],
    [
      "an action near nothing known, with the actions",
      ["machines", "delete", "payment"],
      [
        "stepwise machines: unknown action 'delete': list, show, create, update or deploy",
        "see 'stepwise machines --help'",
      ],
    ],
    [
      "a mistyped command",
      ["exeuctions", "list"],
      [
        "stepwise: unknown command 'exeuctions' (did you mean executions?)",
        "see 'stepwise --help'",
      ],
    ],
  ])("%s: one line, the pointer to --help, exit 2", async (_, args, lines) => {
    expect(await stepwise(args)).toEqual({ code: 2, lines });
  });
});

describe("a command group alone", () => {
  // As `git worktree` alone: the subcommands, and a usage error (exit 2).
  it.each([
    [
      "executions",
      [
        "list",
        "show",
        "history",
        "start",
        "stop",
        "pause",
        "resume",
        "redrive",
        "restart",
        "fork",
        "purge",
        "watch",
      ],
    ],
    ["machines", ["list", "show", "create", "update", "deploy"]],
    ["approvals", ["list", "show", "approve", "reject"]],
  ])(
    "stepwise %s lists its actions, one line each with a summary, and exits 2",
    async (group, actions) => {
      const r = await stepwise([group]);
      expect(r.code).toBe(2);
      expect(r.lines[0]).toBe(`stepwise ${group}: needs an action, one of:`);
      expect(r.lines.slice(1, -1).map((line) => line.trim().split(/\s+/)[0])).toEqual(actions);
      for (const line of r.lines.slice(1, -1)) expect(line).toMatch(/^ {2}[a-z]+ +\S.{8,}$/);
      expect(r.lines.at(-1)).toBe(`see 'stepwise ${group} --help'`);
      expect(r.lines.join("\n")).not.toContain("Usage:");
    },
  );

  it("stepwise help <command> prints that command's usage, exit 0", async () => {
    const r = await stepwise(["help", "machines"]);
    expect(r.code).toBe(0);
    expect(r.lines[0]).toMatch(/^Usage: stepwise machines list/);
  });
});

describe("didYouMean", () => {
  it.each<[string, string[], string]>([
    ["--inptu", ["--input", "--input-file", "--name"], " (did you mean --input?)"],
    ["--jsn", ["--json", "--url"], " (did you mean --json?)"],
    [
      "--stat",
      ["--state-machine", "--status", "--limit"],
      " (did you mean --state-machine or --status?)",
    ],
    ["lsit", ["list", "show"], " (did you mean list?)"],
    ["foo", ["fork", "list"], ""],
    ["--x", ["--url", "--json"], ""],
    ["exeuctions", ["executions", "machines"], " (did you mean executions?)"],
  ])("%s among %j", (typed, known, hint) => {
    expect(didYouMean(typed, known)).toBe(hint);
  });
});
