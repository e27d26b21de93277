import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { formatSeconds, progressLine } from "../../cli/progress.js";

/** `stepwise run`: one --tasks meaning, paths that explain themselves, progress, history. */
async function cli(
  argv: string[],
  options: { isTTY?: boolean } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
    ...(options.isTTY ? { isTTY: true } : {}),
  });
  return { code, stdout, stderr };
}

let dir: string;
const file = (name: string) => join(dir, name);
const charge = JSON.stringify({
  StartAt: "Charge",
  States: { Charge: { Type: "Task", Resource: "function:charge", End: true } },
});
const lambda = JSON.stringify({
  StartAt: "Call",
  States: { Call: { Type: "Task", Resource: "arn:aws:states:::lambda:invoke", End: true } },
});

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stepwise-run-"));
  await writeFile(file("charge.json"), charge);
  await writeFile(file("lambda.json"), lambda);
  await writeFile(
    file("tasks.mjs"),
    "export async function charge(input) { return { charged: input.amount }; }\n" +
      'export default { "arn:aws:states:::lambda:invoke": (input) => ({ invoked: input }) };\n',
  );
  await writeFile(file("empty.mjs"), "export const x = 1;\n");
  await writeFile(file("broken.mjs"), "export function (\n");
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("stepwise run --tasks", () => {
  it("a named function export serves function:<name>", async () => {
    const r = await cli([
      "run",
      file("charge.json"),
      "--tasks",
      file("tasks.mjs"),
      "--input",
      '{"amount": 5}',
    ]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ charged: 5 });
  });

  it("a default export object maps whole Resource strings", async () => {
    const r = await cli(["run", file("lambda.json"), "--tasks", file("tasks.mjs")]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ invoked: {} });
  });

  it.each([
    ["a module that does not exist", "nope.mjs", "--tasks: no such file"],
    ["a module that does not load", "broken.mjs", "--tasks: cannot load"],
    ["a module without functions", "empty.mjs", "exports no function"],
  ])("%s exits 2 with one line, no stack", async (_, name, message) => {
    const r = await cli(["run", file("charge.json"), "--tasks", file(name)]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
    expect(r.stderr).not.toMatch(/^\s+at /m);
  });
});

describe("stepwise run, bad paths", () => {
  it.each([
    ["--input-file", ["--input-file", "nope.json"]],
    ["--mocks", ["--mocks", "nope.json"]],
  ])("a missing %s file exits 2 with one line", async (_, extra) => {
    const r = await cli(["run", file("charge.json"), ...extra]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("nope.json");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("serve's STEPWISE_TASKS shares the meaning and the errors", async () => {
    const saved = process.env.STEPWISE_TASKS;
    process.env.STEPWISE_TASKS = file("nope.mjs");
    try {
      const r = await cli(["serve"]);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain("STEPWISE_TASKS: no such file");
    } finally {
      if (saved === undefined) delete process.env.STEPWISE_TASKS;
      else process.env.STEPWISE_TASKS = saved;
    }
  });
});

describe("stepwise run, for a person", () => {
  it("--history prints a table: id, time, type, state, detail", async () => {
    const r = await cli([
      "run",
      file("charge.json"),
      "--tasks",
      file("tasks.mjs"),
      "--input",
      '{"amount": 5}',
      "--history",
    ]);
    const lines = r.stderr.trim().split("\n");
    expect(lines[0]).toMatch(/^ID\s+TIME\s+TYPE\s+STATE\s+DETAIL$/);
    expect(lines[1]).toMatch(/^1\s+\+0\.000s\s+ExecutionStarted\s+input \{"amount":5\}/);
    expect(lines.some((l) => /^\d+\s+\S+\s+TaskStateEntered\s+Charge\s/.test(l))).toBe(true);
    expect(lines.at(-1)).toMatch(/ExecutionSucceeded\s+output \{"charged":5\}$/);
  });

  it("on a terminal, shows the state it is in and the wait it sleeps through", async () => {
    await writeFile(
      file("wait.json"),
      JSON.stringify({
        StartAt: "Nap",
        States: { Nap: { Type: "Wait", Seconds: 86_400, End: true } },
      }),
    );
    // A day at 864,000 times the speed: 0.1 s of real sleep.
    const r = await cli(["run", file("wait.json"), "--time-scale", "864000"], { isTTY: true });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain("in Nap");
    expect(r.stderr).toContain(
      "waiting 86,400 s (0.1 s with --time-scale) — use --virtual to skip",
    );
    expect(r.stderr.endsWith("\r\x1b[K")).toBe(true);
    expect(r.stdout).toBe("{}\n");
  });

  it("off a terminal, prints no progress", async () => {
    const r = await cli(["run", file("charge.json"), "--tasks", file("tasks.mjs")]);
    expect(r.stderr).toBe("");
  });

  it.each([
    [86_400_000, "86,400"],
    [7_000, "7"],
    [1_500, "1.5"],
  ])("formats %d ms as %s s", (ms, text) => {
    expect(formatSeconds(ms)).toBe(text);
  });

  it("a progress line without a wait", () => {
    expect(progressLine({ state: "Charge", elapsedMs: 2_500, sleeping: undefined })).toBe(
      "in Charge, 2.5 s",
    );
  });
});
