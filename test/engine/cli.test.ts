import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";

/** Runs the CLI with captured output. */
async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const code = await main(argv, {
    stdout: (text) => (stdout += text),
    stderr: (text) => (stderr += text),
  });
  return { code, stdout, stderr };
}

let dir: string;
const file = (name: string) => join(dir, name);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stepwise-cli-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("stepwise run", () => {
  it("runs a JSON definition and prints its output (exit 0)", async () => {
    await writeFile(
      file("ok.json"),
      JSON.stringify({
        StartAt: "A",
        States: {
          A: { Type: "Pass", Parameters: { "doubled.$": "States.MathAdd($.n, $.n)" }, End: true },
        },
      }),
    );
    const r = await cli("run", file("ok.json"), "--virtual", "--input", '{"n": 21}');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ doubled: 42 });
    expect(r.stderr).toBe("");
  });

  it("runs a YAML definition, reading the input from a file", async () => {
    await writeFile(
      file("machine.yaml"),
      [
        "StartAt: Greet",
        "States:",
        "  Greet:",
        "    Type: Pass",
        "    InputPath: $.who",
        "    End: true",
        "",
      ].join("\n"),
    );
    await writeFile(file("input.json"), JSON.stringify({ who: { name: "Ada" } }));
    const r = await cli(
      "run",
      file("machine.yaml"),
      "--virtual",
      "--input-file",
      file("input.json"),
    );
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ name: "Ada" });
  });

  it("with --virtual a one-hour wait costs no real time", async () => {
    await writeFile(
      file("wait.json"),
      JSON.stringify({ StartAt: "W", States: { W: { Type: "Wait", Seconds: 3600, End: true } } }),
    );
    const r = await cli("run", file("wait.json"), "--virtual", "--input", '"done"');
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toBe("done");
  });

  it("takes Task results from --mocks", async () => {
    await writeFile(
      file("task.json"),
      JSON.stringify({
        StartAt: "T",
        States: { T: { Type: "Task", Resource: "arn:aws:states:::lambda:invoke", End: true } },
      }),
    );
    await writeFile(file("mocks.json"), JSON.stringify({ T: [{ Return: { mocked: true } }] }));
    const r = await cli("run", file("task.json"), "--virtual", "--mocks", file("mocks.json"));
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ mocked: true });
  });

  it("a failing machine exits 1 and prints the error and cause", async () => {
    await writeFile(
      file("fail.yaml"),
      [
        "StartAt: F",
        "States:",
        "  F:",
        "    Type: Fail",
        "    Error: Order.Rejected",
        "    Cause: out of stock",
        "",
      ].join("\n"),
    );
    const r = await cli("run", file("fail.yaml"), "--virtual");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("FAILED");
    expect(r.stderr).toContain("Order.Rejected");
    expect(r.stderr).toContain("out of stock");
  });

  it("--history --json prints one JSON history event per line to stderr", async () => {
    const r = await cli(
      "run",
      file("ok.json"),
      "--virtual",
      "--history",
      "--json",
      "--input",
      '{"n": 1}',
    );
    expect(r.code).toBe(0);
    const events = r.stderr
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as { id: number; type: string });
    expect(events.map((e) => e.type)).toEqual([
      "ExecutionStarted",
      "PassStateEntered",
      "PassStateExited",
      "ExecutionSucceeded",
    ]);
    expect(events.map((e) => e.id)).toEqual([1, 2, 3, 4]);
  });

  it("an invalid definition exits 1 with a diagnostic and does not run", async () => {
    await writeFile(
      file("invalid.json"),
      JSON.stringify({ StartAt: "Missing", States: { A: { Type: "Pass", End: true } } }),
    );
    const r = await cli("run", file("invalid.json"), "--virtual");
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(file("invalid.json"));
    expect(r.stderr).toMatch(/error/i);
  });

  it("a missing file exits 2 with one line naming it", async () => {
    const r = await cli("run", file("nope.json"), "--virtual");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("nope.json");
    expect(r.stderr.trim().split("\n")).toHaveLength(1);
  });

  it.each<[string, string[]]>([
    ["no FILE", ["run"]],
    ["two FILEs", ["run", "a.json", "b.json"]],
    ["an unknown option", ["run", "a.json", "--bogus"]],
    ["--input that is not JSON", ["run", "a.json", "--input", "{oops"]],
    ["both --input and --input-file", ["run", "a.json", "--input", "{}", "--input-file", "x.json"]],
    ["a value option without its value", ["run", "a.json", "--input"]],
  ])("bad usage (%s) exits 2 with the usage text", async (_, argv) => {
    const r = await cli(...argv);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("see 'stepwise run --help'");
  });

  it("an unknown command, or none, exits 2", async () => {
    expect((await cli("launch")).code).toBe(2);
    expect((await cli()).code).toBe(2);
    expect((await cli("--help")).code).toBe(0);
  });
});

describe("stepwise test", () => {
  const passMachine = { StartAt: "A", States: { A: { Type: "Pass", Result: "yes", End: true } } };
  const cases = [
    {
      id: "passes",
      definition: passMachine,
      input: {},
      expect: { status: "SUCCEEDED", output: "yes" },
    },
    {
      id: "wrong-output",
      definition: passMachine,
      input: {},
      expect: { status: "SUCCEEDED", output: "no" },
    },
    {
      id: "fails-as-expected",
      definition: { StartAt: "F", States: { F: { Type: "Fail", Error: "E", Cause: "c" } } },
      expect: { status: "FAILED", error: "E" },
    },
    {
      id: "mocked-task",
      definition: {
        StartAt: "T",
        States: {
          T: {
            Type: "Task",
            Resource: "arn:aws:states:::lambda:invoke",
            Retry: [{ ErrorEquals: ["Flaky"] }],
            End: true,
          },
        },
      },
      mocks: { T: [{ Throw: { Error: "Flaky" } }, { Return: 7 }] },
      expect: { status: "SUCCEEDED", output: 7 },
    },
  ];
  const jsonl = (list: unknown[]) => list.map((c) => JSON.stringify(c)).join("\n") + "\n";

  it("prints each failing case with where it differs, and ends with 'N passed, M failed' (exit 1)", async () => {
    await writeFile(file("cases.jsonl"), jsonl(cases));
    const r = await cli("test", file("cases.jsonl"));
    expect(r.code).toBe(1);
    expect(r.stdout.trim().split("\n")).toEqual([
      "FAIL wrong-output",
      "  output differs (path: expected → actual):",
      '  $: "no" → "yes"',
      "3 passed, 1 failed",
    ]);
  });

  it("exits 0 when every case passes", async () => {
    await writeFile(file("green.jsonl"), jsonl(cases.filter((c) => c.id !== "wrong-output")));
    const r = await cli("test", file("green.jsonl"));
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("3 passed, 0 failed\n");
  });

  it("--report writes one {id, passed, actual} line per case", async () => {
    await writeFile(file("cases.jsonl"), jsonl(cases));
    const r = await cli("test", file("cases.jsonl"), "--report", file("report.jsonl"));
    expect(r.code).toBe(1);
    const report = (await readFile(file("report.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    expect(report).toEqual([
      { id: "passes", passed: true, actual: { status: "SUCCEEDED", output: "yes" } },
      { id: "wrong-output", passed: false, actual: { status: "SUCCEEDED", output: "yes" } },
      {
        id: "fails-as-expected",
        passed: true,
        actual: { status: "FAILED", error: "E", cause: "c" },
      },
      { id: "mocked-task", passed: true, actual: { status: "SUCCEEDED", output: 7 } },
    ]);
    for (const line of report) expect(Object.keys(line)).toEqual(["id", "passed", "actual"]);
  });

  it("--filter runs only the cases whose id contains the text", async () => {
    await writeFile(file("cases.jsonl"), jsonl(cases));
    const r = await cli("test", file("cases.jsonl"), "--filter", "pass");
    expect(r.code).toBe(0);
    expect(r.stdout).toBe("1 passed, 0 failed\n");
  });

  it("a line that is not JSON exits 1 naming the line", async () => {
    await writeFile(file("broken.jsonl"), jsonl([cases[0]]) + "{not json\n");
    const r = await cli("test", file("broken.jsonl"));
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("line 2");
  });

  it.each<[string, string[]]>([
    ["no file", ["test"]],
    ["two files", ["test", "cases.jsonl", "more.jsonl"]],
    ["an unknown option", ["test", "cases.jsonl", "--verbose"]],
    ["a concurrency below 1", ["test", "cases.jsonl", "--concurrency", "0"]],
  ])("bad usage (%s) exits 2", async (_, argv) => {
    await writeFile(file("cases.jsonl"), jsonl(cases));
    const r = await cli(...argv.map((a) => (a.endsWith(".jsonl") ? file(a) : a)));
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("see 'stepwise test --help'");
  });
});
