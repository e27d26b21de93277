import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, onTestFailed } from "vitest";
import {
  alive,
  exited,
  freePort,
  logLines,
  ROOT,
  spawnStepwise,
  until,
  type Spawned,
} from "./processes.js";

/**
 * How `stepwise serve` finds its Redis, as a real process: a private redis-server
 * when nothing is configured (on a port of its own here, so the Redis of the
 * machine stays out of it), one readable line when there is no redis-server, and a
 * bounded, quiet wait for a REDIS_URL that does not answer.
 */
const VERSION = (
  JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string }
).version;
const children: ChildProcess[] = [];
const pids: number[] = [];
const dirs: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
  for (const pid of pids.splice(0)) if (alive(pid)) process.kill(pid, "SIGKILL");
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function tempDir(): string {
  const dir = mkdtempSync(join(tmpdir(), "stepwise-serve-"));
  dirs.push(dir);
  return dir;
}

function serve(env: Record<string, string | undefined>, cwd?: string): Spawned {
  const spawned = spawnStepwise(["serve"], {
    env: { STEPWISE_API_KEYS: "", LOG_LEVEL: "info", ...env },
    ...(cwd ? { cwd } : {}),
  });
  children.push(spawned.child);
  // A failure shows what the service said, which is where its cause is.
  onTestFailed(() => {
    console.error(`stepwise serve (pid ${spawned.child.pid}) printed:\n${spawned.output()}`);
  });
  return spawned;
}

async function healthy(base: string): Promise<true | undefined> {
  return (await fetch(`${base}/health`)).ok ? true : undefined;
}

async function runPass(base: string): Promise<{ executionId: string; status: string }> {
  const headers = { "content-type": "application/json" };
  const created = await fetch(`${base}/v1/state-machines`, {
    method: "POST",
    headers,
    body: JSON.stringify({
      name: "hello",
      definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
    }),
  });
  expect(created.status).toBe(201);
  const run = await fetch(`${base}/v1/state-machines/hello/executions?wait=10`, {
    method: "POST",
    headers,
    body: JSON.stringify({ input: { who: "world" } }),
  });
  const body = (await run.json()) as { executionId: string; status: string; output: unknown };
  expect(body).toMatchObject({ status: "SUCCEEDED", output: { who: "world" } });
  return body;
}

describe("stepwise serve without REDIS_URL", () => {
  it("starts a private redis-server, keeps its data across restarts, and stops it", async () => {
    const cwd = tempDir();
    const [redisPort, port] = [await freePort(), await freePort()];
    const env = {
      REDIS_URL: undefined,
      STEPWISE_LOCAL_REDIS_PORT: String(redisPort),
      PORT: String(port),
      STEPWISE_CONCURRENCY: "3",
    };
    const base = `http://127.0.0.1:${port}`;

    const first = serve(env, cwd);
    await until(() => healthy(base));
    const announced = logLines(first.output()).filter((l) =>
      l.msg.includes("started a private redis-server"),
    );
    expect(announced).toHaveLength(1);
    const pid = announced[0]!.pid as number;
    pids.push(pid);
    expect(alive(pid)).toBe(true);
    // One start-up line names the Redis, the API, the worker's concurrency and the version.
    // /health answers once the API listens; the ready line follows when the worker runs.
    const ready = await until(async () =>
      logLines(first.output()).find((l) => l.msg.includes(" ready: ")),
    );
    expect(ready).toMatchObject({
      version: VERSION,
      redis: `redis://127.0.0.1:${redisPort}`,
      api: base,
      worker: { concurrency: 3 },
    });
    expect(ready!.msg).toContain(`Redis redis://127.0.0.1:${redisPort}`);
    expect(ready!.msg).toContain("worker concurrency 3");

    const { executionId } = await runPass(base);
    expect(existsSync(join(cwd, ".stepwise", "redis", "appendonlydir"))).toBe(true);
    first.child.kill("SIGTERM");
    expect(await exited(first.child)).toBe(0);
    expect(alive(pid)).toBe(false);

    // A second start finds the first one's executions (AOF).
    const second = serve(env, cwd);
    await until(() => healthy(base));
    const again = await fetch(`${base}/v1/executions/${encodeURIComponent(executionId)}`);
    expect(await again.json()).toMatchObject({ status: "SUCCEEDED", output: { who: "world" } });
    const secondPid = logLines(second.output()).find((l) =>
      l.msg.includes("started a private redis-server"),
    )!.pid as number;
    pids.push(secondPid);
    second.child.kill("SIGTERM");
    expect(await exited(second.child)).toBe(0);
    expect(alive(secondPid)).toBe(false);
    // Two cold starts of the service through tsx, a run and two shutdowns: about 5 s
    // alone, but CI runs it beside the 16,000-child joins, which keep both cores busy.
  }, 120_000);

  it("without redis-server on PATH says in one line how to get one, and exits 1", async () => {
    const { child, output } = serve({
      REDIS_URL: undefined,
      STEPWISE_LOCAL_REDIS_PORT: String(await freePort()),
      PORT: String(await freePort()),
      PATH: tempDir(),
    });
    expect(await exited(child)).toBe(1);
    const lines = output().trim().split("\n");
    expect(lines).toHaveLength(1);
    for (const hint of [
      "apt install redis-server",
      "brew install redis",
      "docker run",
      "REDIS_URL",
    ]) {
      expect(lines[0]).toContain(hint);
    }
  }, 30_000);
});

describe("stepwise serve with a REDIS_URL that does not answer", () => {
  it("logs one line per attempt, answers /health with 503, and gives up with exit 1", async () => {
    const port = await freePort();
    const redisUrl = `redis://127.0.0.1:${await freePort()}`;
    const { child, output } = serve({
      REDIS_URL: redisUrl,
      PORT: String(port),
      STEPWISE_CONNECT_TIMEOUT: "3",
    });
    const health = await until(async () => {
      const reply = await fetch(`http://127.0.0.1:${port}/health`);
      return reply.status === 503 ? ((await reply.json()) as { error: string }) : undefined;
    });
    expect(health.error).toBe("ServiceUnavailable");
    expect(await exited(child)).toBe(1);

    // Nothing but log lines: no stack traces, no ioredis reports.
    const text = output().trim();
    expect(text).not.toMatch(/^\s+at /m);
    const lines = logLines(text);
    expect(lines).toHaveLength(text.split("\n").length);
    const attempts = lines.filter((l) => l.msg.includes("does not answer"));
    expect(attempts.length).toBeGreaterThanOrEqual(2);
    for (const a of attempts) expect(a.msg).toContain(`Redis at ${redisUrl} does not answer`);
    const last = lines.find((l) => l.msg.startsWith("giving up"));
    expect(last).toMatchObject({ level: 50 });
    expect(last!.msg).toContain("did not answer within 3 s");
  }, 30_000);

  it("goes on as soon as Redis answers", async () => {
    const port = await freePort();
    const redisPort = await freePort();
    const { child, output } = serve({
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      PORT: String(port),
      STEPWISE_PREFIX: `stepwise-e2e-late-${redisPort}`,
    });
    await until(async () => (output().includes("does not answer") ? true : undefined));
    const redis = spawn(
      "redis-server",
      ["--port", String(redisPort), "--save", "", "--appendonly", "no"],
      { stdio: "ignore" },
    );
    pids.push(redis.pid!);
    const base = `http://127.0.0.1:${port}`;
    await until(() => healthy(base));
    await runPass(base);
    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
    redis.kill("SIGTERM");
    await exited(redis);
  }, 40_000);
});
