import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exited, freePort, ROOT } from "../e2e/processes.js";

/**
 * bin/stepwise.js, the installed `stepwise`, run with its import of dist/ pointed at
 * the sources (so no build is needed): an error it catches from `main` is a bug and
 * prints its stack (exit 70); usage, configuration and connection errors of the
 * client commands never get there.
 */
const TSX = pathToFileURL(join(ROOT, "node_modules/tsx/dist/loader.mjs")).href;
let dir: string;

/** The entry point's text, importing `main` from `module` instead of dist/. */
async function entryPoint(module: string): Promise<string> {
  const text = await readFile(join(ROOT, "bin/stepwise.js"), "utf8");
  const entry = text
    .replace(/^#!.*\n/, "")
    .replace('"../dist/cli/main.js"', JSON.stringify(module));
  expect(entry).toContain(JSON.stringify(module));
  return entry;
}

async function bin(
  module: string,
  args: string[],
): Promise<{ code: number | null; output: string }> {
  // With -e, process.argv has no script path: "stepwise.js" stands in for it.
  const env = { ...process.env };
  delete env.STEPWISE_URL;
  const child = spawn(
    process.execPath,
    [
      "--import",
      TSX,
      "--input-type=module",
      "-e",
      await entryPoint(module),
      "--",
      "stepwise.js",
      ...args,
    ],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (c: Buffer) => (output += c.toString()));
  child.stderr.on("data", (c: Buffer) => (output += c.toString()));
  const code = await exited(child);
  return { code, output };
}

const SOURCES = pathToFileURL(join(ROOT, "cli/main.ts")).href;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "stepwise-bin-"));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("bin/stepwise.js", () => {
  it("a client command without its service: one line, exit 1, no internal error", async () => {
    const port = await freePort();
    const r = await bin(SOURCES, ["executions", "list", "--url", `http://127.0.0.1:${port}`]);
    expect(r).toEqual({
      code: 1,
      output:
        `stepwise executions: cannot reach http://127.0.0.1:${port}: connection refused` +
        ` (is "stepwise serve" running there? check --url)\n`,
    });
  });

  it.each([
    [["machines", "list", "--url", "ftp://127.0.0.1:8080"]],
    [["machines", "list", "--url", "http://[not a host"]],
    [["approvals", "list", "--timeout", "soon"]],
    [["executions", "start", "m", "--input", "{not json"]],
    [["executions"]],
  ])("%j: a usage error, exit 2, no internal error", async (args) => {
    const r = await bin(SOURCES, args);
    expect(r.code).toBe(2);
    expect(r.output).toMatch(/^stepwise \w+: /);
    expect(r.output).not.toContain("internal error");
    expect(r.output).not.toMatch(/^\s+at /m);
  });

  it("what main throws is a bug: its stack, exit 70", async () => {
    const broken = join(dir, "main.mjs");
    await writeFile(broken, 'export async function main() { throw new Error("boom"); }\n');
    const r = await bin(pathToFileURL(broken).href, ["executions", "list"]);
    expect(r.code).toBe(70);
    expect(r.output).toMatch(/^stepwise: internal error \(a bug in stepwise; please report it/);
    expect(r.output).toContain("Error: boom");
    expect(r.output).toMatch(/^\s+at main /m);
  });
});
