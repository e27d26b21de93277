import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";

/** `stepwise validate` through main(), with captured output, on temporary files. */
let dir: string;
const file = (name: string): string => join(dir, name);

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "stepwise-validate-"));
  writeFileSync(
    file("ok.json"),
    JSON.stringify({ StartAt: "A", States: { A: { Type: "Pass", End: true } } }),
  );
  writeFileSync(file("ok.yaml"), "StartAt: A\nStates:\n  A:\n    Type: Succeed\n");
  writeFileSync(file("bad.yml"), "StartAt: A\nStates:\n  A:\n    Type: Pass\n    Next: B\n");
  writeFileSync(file("binary.json"), Buffer.from([0xff, 0xfe, 0xfd, 0x00, 0x01]));
  writeFileSync(
    file("wftt.json"),
    JSON.stringify({
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
          End: true,
        },
      },
    }),
  );
  writeFileSync(
    file("sam.yaml"),
    "StartAt: W\nStates:\n  W:\n    Type: Wait\n    Seconds: ${Wait}\n    Next: T\n  T:\n    Type: Task\n    Resource: ${Fn}\n    End: true\n",
  );
  writeFileSync(file("subs.json"), JSON.stringify({ Wait: 5, Fn: "not-an-arn" }));
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(argv, { stdout: (t) => (out += t), stderr: (t) => (err += t) });
  return { code, out, err };
}

describe("stepwise validate", () => {
  it("exits 0 when every file is valid", async () => {
    const { code, out } = await run("validate", file("ok.json"), file("ok.yaml"));
    expect(code).toBe(0);
    expect(out).toContain(`${file("ok.json")}: valid`);
  });

  it("exits 1 and prints file:line:column diagnostics when a file is invalid", async () => {
    const { code, out } = await run("validate", file("ok.json"), file("bad.yml"));
    expect(code).toBe(1);
    expect(out).toContain(
      `${file("bad.yml")}:5:5: error MISSING_TRANSITION_TARGET Next 'B' names no state`,
    );
    expect(out).toContain("(/States/A/Next)");
  });

  it("prints one JSON array with --json", async () => {
    const { code, out } = await run("validate", "--json", file("ok.json"), file("bad.yml"));
    expect(code).toBe(1);
    const reports = JSON.parse(out) as {
      file: string;
      valid: boolean;
      diagnostics: { code: string }[];
    }[];
    expect(reports.map((r) => [r.file, r.valid])).toEqual([
      [file("ok.json"), true],
      [file("bad.yml"), false],
    ]);
    expect(reports[1]!.diagnostics.map((d) => d.code)).toContain("MISSING_TRANSITION_TARGET");
  });

  it("reports an unreadable or binary file as a diagnostic, exit 1", async () => {
    const missing = await run("validate", file("missing.json"));
    expect(missing.code).toBe(1);
    expect(missing.out).toContain("UNREADABLE_FILE");
    const binary = await run("validate", file("binary.json"));
    expect(binary.code).toBe(1);
    expect(binary.out).toContain("NOT_TEXT");
    const directory = await run("validate", dir);
    expect(directory.code).toBe(1);
  });

  it("checks Express rules with --type EXPRESS", async () => {
    expect((await run("validate", file("wftt.json"))).code).toBe(0);
    const express = await run("validate", "--type", "EXPRESS", file("wftt.json"));
    expect(express.code).toBe(1);
    expect(express.out).toContain("UNSUPPORTED_IN_EXPRESS");
  });

  it("fills ${Name} placeholders from --subs FILE and --sub NAME=VALUE (which wins)", async () => {
    const open = await run("validate", file("sam.yaml"));
    expect(open.code).toBe(0);
    expect(open.out).toContain(`${file("sam.yaml")}:5:5: warning UNRESOLVED_PLACEHOLDER`);
    expect(open.out.match(/UNRESOLVED_PLACEHOLDER/g)).toHaveLength(2);

    const fromFile = await run("validate", "--subs", file("subs.json"), file("sam.yaml"));
    expect(fromFile.code).toBe(1);
    expect(fromFile.out).toContain("INVALID_RESOURCE");

    const both = await run(
      "validate",
      "--subs",
      file("subs.json"),
      "--sub",
      "Fn=arn:aws:lambda:us-east-1:123456789012:function:f",
      file("sam.yaml"),
    );
    expect(both).toMatchObject({ code: 0, out: `${file("sam.yaml")}: valid\n` });
    expect((await run("validate", "--sub", "NoEquals", file("sam.yaml"))).code).toBe(2);
  });

  it("exits 2 on usage errors", async () => {
    expect((await run("validate")).code).toBe(2);
    expect((await run("validate", "--bogus", file("ok.json"))).code).toBe(2);
    expect((await run("validate", "-x", file("ok.json"))).code).toBe(2);
    expect((await run("validate", "--type", "FAST", file("ok.json"))).code).toBe(2);
  });

  it("prints its usage with --help", async () => {
    const { code, out } = await run("validate", "--help");
    expect(code).toBe(0);
    expect(out).toContain("Usage: stepwise validate");
  });
});
