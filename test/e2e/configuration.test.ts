import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { exited, logLine, spawnBin, testPrefix } from "./processes.js";
import { deleteKeys, REDIS_URL } from "./stack.js";
import { Redis } from "ioredis";

/**
 * The shipped binary takes every setting the tests rely on, and refuses a bad one
 * before it serves anything: exit 2 and one line naming the variable, never a stack.
 * Each case here failed on the commit before config/ (issue 34's list of gaps).
 */
const KEYS = "ops:admin:admin-secret-0123456789,alice:approve:alice-secret-0123456789";
const dir = mkdtempSync(join(tmpdir(), "stepwise-config-"));
/** The key prefixes the services of this file wrote under, deleted at the end. */
const prefixes: string[] = [];
function prefix(): string {
  const name = testPrefix("config");
  prefixes.push(name);
  return name;
}
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  const redis = new Redis(REDIS_URL);
  for (const name of prefixes) await deleteKeys(redis, name);
  redis.disconnect();
});

async function refused(args: string[], env: Record<string, string>): Promise<string> {
  const run = spawnBin(args, { env: { REDIS_URL, STEPWISE_API_KEYS: KEYS, ...env } });
  const code = await exited(run.child, 20_000);
  const output = run.output();
  expect({ code, output }).toMatchObject({ code: 2 });
  expect(output).not.toMatch(/\n\s+at /); // no stack trace
  expect(output.trim().split("\n")).toHaveLength(1);
  return output.trim();
}

describe("a bad value stops the process with one line naming the variable", () => {
  it.each([
    // gap 1: a malformed STEPWISE_APPROVER_GROUPS was accepted silently (serve never read it)
    [
      ["serve"],
      { STEPWISE_APPROVER_GROUPS: "alice:finance" },
      "STEPWISE_APPROVER_GROUPS entry 'alice:finance'",
    ],
    [
      ["serve"],
      { STEPWISE_APPROVER_GROUPS: "bob=finance" },
      "STEPWISE_APPROVER_GROUPS names key 'bob'",
    ],
    // gap 9: silently 3000 / a stack trace at import time
    [
      ["serve"],
      { STEPWISE_LOCK_MS: "abc" },
      "STEPWISE_LOCK_MS='abc': expected a whole number of at least 1",
    ],
    [["worker"], { STEPWISE_LOCK_MS: "abc" }, "STEPWISE_LOCK_MS='abc'"],
    [
      ["serve"],
      { STEPWISE_AWS_REGION: "EU_WEST" },
      "STEPWISE_AWS_REGION='EU_WEST': expected a region name",
    ],
    [["worker"], { STEPWISE_TASK_CONCURRENCY: "0" }, "STEPWISE_TASK_CONCURRENCY='0'"],
    [["serve"], { STEPWISE_FIRE_CONCURRENCY: "x" }, "STEPWISE_FIRE_CONCURRENCY='x'"],
    [["serve"], { STEPWISE_LOG_LEVEL: "chatty" }, "STEPWISE_LOG_LEVEL='chatty'"],
    // gap 7: the webhook's settings, checked before anything starts
    [
      ["serve"],
      { STEPWISE_APPROVAL_WEBHOOK: "https://hooks.example/x" },
      "needs STEPWISE_WEBHOOK_SECRET",
    ],
    [
      ["worker"],
      { STEPWISE_APPROVAL_WEBHOOK: "not a url", STEPWISE_WEBHOOK_SECRET: "0123456789abcdef" },
      "STEPWISE_APPROVAL_WEBHOOK='not a url'",
    ],
    // gap 8
    [["serve"], { STEPWISE_EGRESS_ALLOW: "10.0.0.0/64" }, "STEPWISE_EGRESS_ALLOW"],
    [["config"], { STEPWISE_RETENTION_DAYS: "soon" }, "STEPWISE_RETENTION_DAYS='soon'"],
  ])("stepwise %j with %j", async (args, env, message) => {
    expect(await refused(args, env)).toContain(message);
  });

  it("leaves commands that do not use the setting alone (validate with a bad region)", async () => {
    const run = spawnBin(["validate", "definitions/hello.asl.json"], {
      env: { STEPWISE_AWS_REGION: "EU_WEST" },
    });
    expect(await exited(run.child)).toBe(0);
    expect(run.output()).toContain("valid");
  });
});

describe("settings the binary now takes", () => {
  it("gives serve's worker the concurrencies of its flags and variables (gaps 2–4)", async () => {
    const own = prefix();
    const service = spawnBin(["serve", "--task-concurrency", "7"], {
      env: {
        REDIS_URL,
        STEPWISE_PREFIX: own,
        PORT: "0",
        STEPWISE_CONCURRENCY: "5",
        STEPWISE_FIRE_CONCURRENCY: "9",
        STEPWISE_TASK_CONCURRENCY: "3",
      },
    });
    const ready = await logLine(service, /ready: API /);
    expect(ready.worker).toEqual({ concurrency: 5, taskConcurrency: 7, fireConcurrency: 9 });
    service.child.kill("SIGTERM");
    expect(await exited(service.child)).toBe(0);
  });

  it("gives stepwise worker the same defaults as serve's (gap 2: 16, not 32)", async () => {
    const worker = spawnBin(["worker"], {
      env: { REDIS_URL, STEPWISE_PREFIX: prefix() },
    });
    const ready = await logLine(worker, /worker ready/);
    expect(ready).toMatchObject({ concurrency: 16, taskConcurrency: 64, fireConcurrency: 64 });
    worker.child.kill("SIGTERM");
    expect(await exited(worker.child)).toBe(0);
  });

  it("serves the console from STEPWISE_CONSOLE_DIR (gap 10), and / leads there", async () => {
    const consoleDir = join(dir, "console");
    rmSync(consoleDir, { recursive: true, force: true });
    const { mkdirSync } = await import("node:fs");
    mkdirSync(consoleDir);
    writeFileSync(join(consoleDir, "index.html"), "<!doctype html><title>own console</title>");
    const service = spawnBin(["serve", "--no-worker"], {
      env: {
        REDIS_URL,
        STEPWISE_PREFIX: prefix(),
        PORT: "0",
        STEPWISE_CONSOLE_DIR: consoleDir,
      },
    });
    const ready = await logLine(service, /ready: API /);
    const page = await fetch(`${String(ready.api)}/`);
    expect(page.url).toBe(`${String(ready.api)}/console/`);
    expect(await page.text()).toContain("own console");
    service.child.kill("SIGTERM");
    expect(await exited(service.child)).toBe(0);
  });

  it("prints the configuration in force with secrets masked (stepwise config)", async () => {
    const run = spawnBin(["config"], {
      env: {
        STEPWISE_API_KEYS: KEYS,
        STEPWISE_APPROVER_GROUPS: "alice=finance",
        REDIS_URL: "redis://:hunter2hunter2@127.0.0.1:6379",
        STEPWISE_CONCURRENCY: "4",
      },
    });
    expect(await exited(run.child)).toBe(0);
    const out = run.output();
    expect(out).toMatch(/^STEPWISE_API_KEYS\s+ops:admin:\*\*\*,alice:approve:\*\*\*$/m);
    expect(out).toMatch(/^STEPWISE_APPROVER_GROUPS\s+alice=finance$/m);
    expect(out).toMatch(/^STEPWISE_CONCURRENCY\s+4$/m);
    expect(out).toMatch(/^STEPWISE_LOCK_MS\s+3000 {2}\(default\)$/m);
    expect(out).toMatch(/^REDIS_URL\s+redis:\/\/:\*\*\*@127\.0\.0\.1:6379$/m);
    expect(out).not.toContain("secret-0123456789");
    expect(out).not.toContain("hunter2");
  });
});
