import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { KEYS, startStack, type Stack } from "./stack.js";

/**
 * The `stepwise machines|executions` client against a live server (real socket,
 * real Redis, real worker), in table and in --json output.
 */
let stack: Stack;
let dir: string;

async function cli(
  args: string[],
  options: { key?: string; tty?: boolean } = {},
): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main([...args, "--url", stack.url, "--api-key", options.key ?? KEYS.admin], {
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
    stdoutTTY: options.tty ?? false,
  });
  return { code, out, err };
}

beforeAll(async () => {
  stack = await startStack();
  dir = mkdtempSync(join(tmpdir(), "stepwise-cli-"));
  writeFileSync(
    join(dir, "nap.asl.yaml"),
    [
      "StartAt: First",
      "States:",
      "  First: {Type: Pass, Next: Nap}",
      "  Nap: {Type: Wait, Seconds: 1, Next: Last}",
      "  Last: {Type: Pass, End: true}",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "fail.asl.json"),
    JSON.stringify({ StartAt: "F", States: { F: { Type: "Fail", Error: "Oops" } } }),
  );
  writeFileSync(join(dir, "bad.asl.json"), '{"StartAt": "Nowhere", "States": {}}');
  writeFileSync(join(dir, "input.json"), '{"who": "file"}');
});

afterAll(async () => {
  await stack?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("stepwise machines", () => {
  it("creates, lists, shows and updates state machines", async () => {
    const created = await cli(["machines", "create", "nap", join(dir, "nap.asl.yaml")]);
    expect(created).toMatchObject({ code: 0, out: "nap: version 1\n" });
    await cli(["machines", "create", "fail", join(dir, "fail.asl.json")]);

    const list = await cli(["machines", "list"]);
    expect(list.code).toBe(0);
    expect(list.out.split("\n")[0]).toMatch(/^NAME\s+VERSION\s+CREATED\s+HASH$/);
    expect(list.out).toMatch(/^nap\s+1\s+\S+\s+[0-9a-f]{12}$/m);
    const listJson = JSON.parse((await cli(["machines", "list", "--json"])).out);
    expect(listJson.items.map((m: { name: string }) => m.name).sort()).toEqual(["fail", "nap"]);

    const show = await cli(["machines", "show", "nap"]);
    expect(show.out).toContain("version 1 of 1");
    expect(show.out).toContain('"StartAt": "First"');

    const same = await cli(["machines", "update", "nap", join(dir, "nap.asl.yaml")]);
    expect(same.out).toBe("nap: version 1 (unchanged)\n");
  });

  it("prints the diagnostics of a refused definition, and exits 1", async () => {
    const bad = await cli(["machines", "create", "bad", join(dir, "bad.asl.json")]);
    expect(bad.code).toBe(1);
    expect(bad.err).toContain("InvalidDefinition");
    expect(bad.err).toContain("bad.asl.json");
    const missing = await cli(["machines", "create", "x", join(dir, "nope.json")]);
    expect(missing.code).toBe(2);
  });
});

describe("stepwise executions", () => {
  it("starts and waits, lists, shows and prints the history", async () => {
    const started = await cli([
      "executions",
      "start",
      "nap",
      "--input-file",
      join(dir, "input.json"),
      "--wait",
      "10",
    ]);
    expect(started.code).toBe(0);
    const id = started.out.split("\n")[0]!;
    expect(id).toMatch(/^arn:aws:states:.*:execution:nap:/);
    expect(started.out).toMatch(/status\s+SUCCEEDED/);

    const list = await cli(["executions", "list", "--state-machine", "nap"]);
    expect(list.out).toMatch(/^EXECUTION\s+STATUS\s+STARTED\s+STOPPED$/m);
    expect(list.out).toContain(`${id}  SUCCEEDED`);
    const shown = JSON.parse((await cli(["executions", "show", id, "--json"])).out);
    expect(shown).toMatchObject({ executionId: id, status: "SUCCEEDED", input: { who: "file" } });
    const history = await cli(["executions", "history", id]);
    expect(history.out).toMatch(/^ID\s+TIME\s+TYPE/);
    expect(history.out).toContain("WaitStateExited");
    expect(history.out).toContain("ExecutionSucceeded");
    const historyJson = JSON.parse((await cli(["executions", "history", id, "--json"])).out);
    expect(historyJson.items.at(-1).type).toBe("ExecutionSucceeded");
  });

  it("colours statuses on a terminal only, and never with NO_COLOR", async () => {
    const colour = await cli(["executions", "list", "--state-machine", "nap"], { tty: true });
    expect(colour.out).toContain("\u001b[32mSUCCEEDED\u001b[0m");
    process.env.NO_COLOR = "1";
    try {
      const plain = await cli(["executions", "list", "--state-machine", "nap"], { tty: true });
      expect(plain.out).not.toContain("\u001b[");
    } finally {
      delete process.env.NO_COLOR;
    }
  });

  it("watches an execution live and exits with its outcome", async () => {
    const started = await cli(["executions", "start", "nap", "--input", '{"a": 1}']);
    const id = started.out.trim();
    const watched = await cli(["executions", "watch", id]);
    expect(watched.code).toBe(0);
    const lines = watched.out.trim().split("\n");
    expect(lines).toContain("→ Nap");
    expect(lines.find((l) => l.startsWith("✓ Nap"))).toMatch(/^✓ Nap {2}\d+\.\d\ds$/);
    expect(lines.at(-1)).toMatch(/^SUCCEEDED in \d+\.\d+s$/);

    const failing = (await cli(["executions", "start", "fail"])).out.trim();
    const failed = await cli(["executions", "watch", failing]);
    expect(failed.code).toBe(1);
    expect(failed.out).toMatch(/FAILED in/);
    const events = await cli(["executions", "watch", failing, "--json"]);
    expect(
      events.out
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l).type),
    ).toContain("ExecutionFailed");
  });

  it("pauses, resumes, stops and purges", async () => {
    const id = (await cli(["executions", "start", "nap"])).out.trim();
    const paused = await cli(["executions", "pause", id, "--reason", "look first"]);
    expect(paused.code).toBe(0);
    expect(paused.out).toMatch(/status\s+PAUSED/);
    expect(paused.out).toContain("by ops: look first");
    const resumed = JSON.parse((await cli(["executions", "resume", id, "--json"])).out);
    expect(resumed.status).toBe("RUNNING");
    const stopped = await cli(["executions", "stop", id, "--cause", "enough"]);
    expect(stopped.out).toMatch(/status\s+ABORTED/);
    const again = await cli(["executions", "stop", id]);
    expect(again.code).toBe(1);
    expect(again.err).toContain("409 ExecutionNotRunning");
    expect(await cli(["executions", "purge", id])).toMatchObject({
      code: 0,
      out: `purged ${id}\n`,
    });
    expect((await cli(["executions", "show", id])).err).toContain("404 ExecutionDoesNotExist");
  });

  it("refuses what the key may not do, and bad command lines", async () => {
    const denied = await cli(["executions", "list"], { key: KEYS.callback });
    expect(denied.code).toBe(1);
    expect(denied.err).toContain("403 Forbidden");
    expect((await cli(["executions", "frobnicate"])).code).toBe(2);
    expect((await cli(["executions", "show"])).code).toBe(2);
    expect((await cli(["executions", "start", "nap", "--input", "{nope"])).code).toBe(2);
  });
});
