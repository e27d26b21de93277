import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { diffJson, formatDifferences } from "../../engine/testing/diff.js";

/** `stepwise test`: cases are validated first, mocks checked, failures located. */
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
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stepwise-test-command-"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function runCases(cases: unknown[]): Promise<{ code: number; stdout: string }> {
  const path = join(dir, `cases-${Math.random().toString(36).slice(2)}.jsonl`);
  await writeFile(path, cases.map((c) => JSON.stringify(c)).join("\n") + "\n");
  return cli("test", path);
}

const task = {
  StartAt: "Charge",
  States: {
    Charge: { Type: "Task", Resource: "arn:aws:states:::lambda:invoke", End: true },
  },
};

describe("stepwise test", () => {
  it("an expect with only a status checks only the status", async () => {
    const r = await runCases([
      {
        id: "ok",
        definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
        input: { a: 1 },
        expect: { status: "SUCCEEDED" },
      },
      {
        id: "failed, any error",
        definition: { StartAt: "F", States: { F: { Type: "Fail", Error: "E" } } },
        expect: { status: "FAILED" },
      },
    ]);
    expect(r).toMatchObject({ code: 0, stdout: "2 passed, 0 failed\n" });
  });

  it("validates each case first: a StartAt that names no state is a diagnostic", async () => {
    const r = await runCases([
      {
        id: "bad-start",
        definition: { StartAt: "X", States: { P: { Type: "Pass", End: true } } },
        expect: { status: "SUCCEEDED" },
      },
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("FAIL bad-start\n  definition: INVALID_START_AT");
    expect(r.stdout).not.toContain("engine error");
  });

  it("refuses mocks for states that do not exist, naming the Task states", async () => {
    const r = await runCases([
      {
        id: "typo",
        definition: task,
        mocks: { Chrage: [{ Return: 1 }] },
        expect: { status: "SUCCEEDED" },
      },
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      "mocks name state 'Chrage', which is not in the definition (its Task states: Charge)",
    );
  });

  it("accepts mocks for states nested in Map and Parallel", async () => {
    const r = await runCases([
      {
        id: "nested",
        definition: {
          StartAt: "M",
          States: {
            M: {
              Type: "Map",
              ItemProcessor: { StartAt: "Charge", States: task.States },
              End: true,
            },
          },
        },
        input: [1, 2],
        mocks: { Charge: [{ Return: "a" }, { Return: "b" }] },
        expect: { status: "SUCCEEDED", output: ["a", "b"] },
      },
    ]);
    expect(r).toMatchObject({ code: 0, stdout: "1 passed, 0 failed\n" });
  });

  it("a wrong output prints a structural diff: path, expected → actual", async () => {
    const r = await runCases([
      {
        id: "diff",
        definition: {
          StartAt: "P",
          States: { P: { Type: "Pass", Result: { a: { b: [1, 2, 3] }, c: "x" }, End: true } },
        },
        expect: { status: "SUCCEEDED", output: { a: { b: [1, 5] }, c: "x", d: true } },
      },
    ]);
    expect(r.stdout.split("\n").slice(0, 5)).toEqual([
      "FAIL diff",
      "  output differs (path: expected → actual):",
      "  $.a.b[1]: 5 → 2",
      "  $.a.b[2]: (absent) → 3",
      "  $.d: true → (absent)",
    ]);
  });

  it("a definition may be a file beside the cases (JSON or YAML); a missing one fails its case", async () => {
    await writeFile(
      join(dir, "pass.asl.yaml"),
      "StartAt: P\nStates:\n  P:\n    Type: Pass\n    Result: 42\n    End: true\n",
    );
    const r = await runCases([
      { id: "yaml", definition: "pass.asl.yaml", expect: { status: "SUCCEEDED", output: 42 } },
      { id: "gone", definition: "gone.asl.json", expect: { status: "SUCCEEDED" } },
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("FAIL gone\n  cannot read definition 'gone.asl.json'");
    expect(r.stdout).toContain("1 passed, 1 failed");
  });

  it("cases sharing a definition file each get its verdict, and their own mocks checked", async () => {
    // Each distinct definition is validated once (cli/cases-file.ts): the verdict and
    // the mocks check must still reach every case that names it.
    await writeFile(join(dir, "charge.asl.json"), JSON.stringify(task));
    await writeFile(
      join(dir, "broken.asl.json"),
      JSON.stringify({ StartAt: "Nowhere", States: {} }),
    );
    const r = await runCases([
      {
        id: "ok",
        definition: "charge.asl.json",
        mocks: { Charge: [{ Return: 1 }] },
        expect: { status: "SUCCEEDED", output: 1 },
      },
      {
        id: "typo",
        definition: "charge.asl.json",
        mocks: { Chrage: [{ Return: 1 }] },
        expect: { status: "SUCCEEDED" },
      },
      { id: "broken 1", definition: "broken.asl.json", expect: { status: "SUCCEEDED" } },
      { id: "broken 2", definition: "broken.asl.json", expect: { status: "SUCCEEDED" } },
    ]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain("FAIL typo\n  mocks name state 'Chrage'");
    expect(r.stdout).toMatch(/FAIL broken 1\n {2}broken\.asl\.json:1:\d+: /);
    expect(r.stdout).toMatch(/FAIL broken 2\n {2}broken\.asl\.json:1:\d+: /);
    expect(r.stdout).toContain("1 passed, 3 failed");
  });

  it("--filter selects cases before their definitions are read", async () => {
    const path = join(dir, "filtered.jsonl");
    const cases = [
      { id: "keep", definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } } },
      { id: "drop", definition: "no-such-file.asl.json" },
    ].map((c) => JSON.stringify({ ...c, expect: { status: "SUCCEEDED" } }));
    await writeFile(path, cases.join("\n") + "\n");
    expect(await cli("test", path, "--filter", "keep")).toMatchObject({
      code: 0,
      stdout: "1 passed, 0 failed\n",
    });
  });
  it("a cause the case names must match", async () => {
    const r = await runCases([
      {
        id: "cause",
        definition: { StartAt: "F", States: { F: { Type: "Fail", Error: "E", Cause: "c" } } },
        expect: { status: "FAILED", error: "E", cause: "d" },
      },
    ]);
    expect(r.stdout).toContain('FAIL cause\n  cause "c", expected "d"');
  });
});

describe("diffJson", () => {
  it.each([
    [{ a: 1 }, { a: 1 }, []],
    [{ a: 1 }, { a: 2 }, ["$.a: 1 → 2"]],
    [{ "a b": [1] }, { "a b": [] }, ['$["a b"][0]: 1 → (absent)']],
    [[{ x: null }], [{ x: 0 }], ["$[0].x: null → 0"]],
    [{ a: [1] }, { a: { 0: 1 } }, ['$.a: [1] → {"0":1}']],
    ["s", 1, ['$: "s" → 1']],
  ])("%j vs %j", (expected, actual, lines) => {
    expect(formatDifferences(diffJson(expected, actual))).toEqual(lines);
  });
});
