import { execFile } from "node:child_process";
import { chmod, mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BIN } from "../e2e/processes.js";

/**
 * The built `stepwise` runs `validate`, `run` and `test` from their own CommonJS bundle
 * through V8's code cache (cli/compile-cache.ts), and loads yaml, jsonata and ajv
 * only when a definition needs them (schema/lazy/, scripts/build.ts). Through the
 * binary: what needs them works, with a cache, without one, with one it may not use
 * and with a corrupt one; `run --tasks` imports the user's module.
 */
let dir: string;
const file = (name: string) => join(dir, name);

const YAML_JSONATA = `QueryLanguage: JSONata
StartAt: Shout
States:
  Shout:
    Type: Pass
    Output: "{% $uppercase($states.input.name) & '-' & $string($count($states.input.items)) %}"
    Next: Check
  Check:
    Type: Choice
    Choices:
      - Condition: "{% $contains($states.input, /X-/) %}"
        Next: Done
    Default: Refuse
  Done:
    Type: Succeed
  Refuse:
    Type: Fail
    Error: Refused
`;

const CASES = [
  {
    id: "yaml, jsonata: succeeds",
    definition: "m.asl.yaml",
    input: { name: "x", items: [1, 2] },
    expect: { status: "SUCCEEDED", output: "X-2" },
  },
  {
    id: "yaml, jsonata: fails",
    definition: "m.asl.yaml",
    input: { name: "y", items: [] },
    expect: { status: "FAILED", error: "Refused" },
  },
];

/** Runs the binary with its temporary directory (so its cache directory) under `tmp`. */
async function stepwise(
  args: string[],
  tmp: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return promisify(execFile)(process.execPath, [BIN, ...args], {
    env: { ...process.env, TMPDIR: tmp },
  }).then(
    (r) => ({ code: 0, stdout: r.stdout, stderr: r.stderr }),
    (err: { code: number; stdout: string; stderr: string }) => ({
      code: err.code,
      stdout: err.stdout,
      stderr: err.stderr,
    }),
  );
}

const cacheDir = (tmp: string) => join(tmp, `stepwise-compile-cache-${process.getuid!()}`);

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stepwise-local-bundle-"));
  await writeFile(file("m.asl.yaml"), YAML_JSONATA);
  await writeFile(file("cases.jsonl"), CASES.map((c) => JSON.stringify(c)).join("\n") + "\n");
  await writeFile(
    file("form.asl.json"),
    JSON.stringify({
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "stepwise:approval",
          Parameters: { Subject: "Pay", ResponseSchema: { type: "objekt" } },
          End: true,
        },
      },
    }),
  );
  await writeFile(
    file("charge.json"),
    JSON.stringify({
      StartAt: "Charge",
      States: { Charge: { Type: "Task", Resource: "function:charge", End: true } },
    }),
  );
  await writeFile(
    file("tasks.mjs"),
    "export async function charge(input) { return { charged: input.amount }; }\n",
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(process.getuid === undefined)("the binary's local commands", () => {
  it("test: a YAML JSONata machine, first compiling and writing the cache, then from it", async () => {
    const tmp = await mkdtemp(join(dir, "tmp-"));
    const first = await stepwise(["test", file("cases.jsonl")], tmp);
    expect(first).toMatchObject({ code: 0, stdout: "2 passed, 0 failed\n" });
    const entries = await readdir(cacheDir(tmp));
    expect(entries).toEqual([expect.stringMatching(/^local-\w+\.cjs\.test\..+\.v8cache$/)]);
    const second = await stepwise(["test", file("cases.jsonl")], tmp);
    expect(second).toEqual(first);
  });

  it("validate: the JSONata check and a human task's form (ajv) work", async () => {
    const tmp = await mkdtemp(join(dir, "tmp-"));
    await writeFile(file("bad.asl.yaml"), YAML_JSONATA.replace("$count(", "$count(("));
    const r = await stepwise(
      ["validate", file("m.asl.yaml"), file("bad.asl.yaml"), file("form.asl.json")],
      tmp,
    );
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(`${file("m.asl.yaml")}: valid`);
    expect(r.stdout).toMatch(/bad\.asl\.yaml:6:\d+: error/);
    expect(r.stdout).toMatch(/form\.asl\.json.*INVALID_APPROVAL_FIELD/);
  });

  it("run --tasks imports the user's module (the loader's import(), not the bundle's)", async () => {
    const tmp = await mkdtemp(join(dir, "tmp-"));
    for (let i = 0; i < 2; i++) {
      const r = await stepwise(
        ["run", file("charge.json"), "--tasks", file("tasks.mjs"), "--input", '{"amount": 5}'],
        tmp,
      );
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout)).toEqual({ charged: 5 });
    }
  });

  it("a cache directory others may write to is not used; the command still runs", async () => {
    const tmp = await mkdtemp(join(dir, "tmp-"));
    await mkdir(cacheDir(tmp));
    await chmod(cacheDir(tmp), 0o777);
    const r = await stepwise(["test", file("cases.jsonl")], tmp);
    expect(r).toMatchObject({ code: 0, stdout: "2 passed, 0 failed\n" });
    expect(await readdir(cacheDir(tmp))).toEqual([]);
  });

  it("no usable cache directory (a file stands there, or no temporary directory): runs", async () => {
    const tmp = await mkdtemp(join(dir, "tmp-"));
    await writeFile(cacheDir(tmp), "not a directory");
    const r = await stepwise(["test", file("cases.jsonl")], tmp);
    expect(r).toMatchObject({ code: 0, stdout: "2 passed, 0 failed\n" });
    const none = await stepwise(["test", file("cases.jsonl")], join(dir, "no-such-dir"));
    expect(none).toMatchObject({ code: 0, stdout: "2 passed, 0 failed\n" });
  });

  it("a corrupt cache entry is rejected by V8 and rewritten", async () => {
    const tmp = await mkdtemp(join(dir, "tmp-"));
    await stepwise(["test", file("cases.jsonl")], tmp);
    const [entry] = await readdir(cacheDir(tmp));
    await writeFile(join(cacheDir(tmp), entry!), "garbage, not V8's code cache");
    const r = await stepwise(["test", file("cases.jsonl")], tmp);
    expect(r).toMatchObject({ code: 0, stdout: "2 passed, 0 failed\n" });
    const again = await stepwise(["test", file("cases.jsonl")], tmp);
    expect(again).toMatchObject({ code: 0, stdout: "2 passed, 0 failed\n" });
  });
});
