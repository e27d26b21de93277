import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { ROOT } from "../e2e/processes.js";

/**
 * The binary validates with the ASL schema's validator compiled at build time
 * (scripts/build.ts, precompiledAslSchema), the sources with ajv compiling it at run
 * time (schema/compile.ts). They must say the same of every definition: the same
 * options, and the schema objects the errors point to the very ones ajv-diagnostics
 * compares them with. The corpus: the validation verdicts (most of them invalid, with
 * union errors that fold), the conformance cases and AWS's documentation examples.
 */
let dir: string;
let files: string[];

async function corpus(): Promise<string[]> {
  const texts: string[] = [];
  for (const name of ["validation.jsonl", "cases.jsonl", "docs-examples.jsonl"]) {
    const lines = (await readFile(join(ROOT, "test/conformance/data", name), "utf8")).split("\n");
    for (const line of lines) {
      if (!line.trim()) continue;
      const entry = JSON.parse(line) as { definition?: unknown; definition_text?: string };
      texts.push(entry.definition_text ?? JSON.stringify(entry.definition, null, 2));
    }
  }
  return texts;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stepwise-precompiled-schema-"));
  const texts = await corpus();
  files = texts.map((_, i) => join(dir, `d${i}.asl.json`));
  await Promise.all(texts.map((text, i) => writeFile(files[i]!, text)));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("the binary's precompiled ASL schema", () => {
  it("gives the diagnostics the run-time compiled schema gives, on the whole corpus", async () => {
    expect(files.length).toBeGreaterThan(300);
    let sources = "";
    await main(["validate", "--json", ...files], {
      stdout: (text) => (sources += text),
      stderr: () => {},
    });
    const binary = await promisify(execFile)(
      process.execPath,
      [join(ROOT, "bin/stepwise.js"), "validate", "--json", ...files],
      { maxBuffer: 64 * 1024 * 1024 },
    ).catch((err: { stdout: string; code: number }) => {
      // exit 1: some definitions are invalid, as they should be
      expect(err.code).toBe(1);
      return err;
    });
    const reports = JSON.parse(sources) as { valid: boolean; diagnostics: unknown[] }[];
    // The corpus exercises the schema: many invalid definitions, many diagnostics.
    expect(reports.filter((r) => !r.valid).length).toBeGreaterThan(50);
    expect(JSON.parse(binary.stdout)).toEqual(reports);
  });
});
