import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import { createServer } from "node:net";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { loaderArgs } from "../../cli/api-processes.js";
import { deleteKeys } from "../integration/helpers.js";
import {
  alive,
  exited,
  freePort,
  logLines,
  spawnStepwise,
  testPrefix,
  until,
  type Spawned,
} from "./processes.js";
import { REDIS_URL } from "./stack.js";

/**
 * `stepwise serve --api-processes N`: N processes answer on one port (node:cluster),
 * the first also runs the worker, a child that dies is replaced, one that cannot
 * start stops the service, and SIGTERM to the primary stops them all.
 */
const children: ChildProcess[] = [];
const prefixes: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});
afterAll(async () => {
  for (const p of prefixes) await deleteKeys(REDIS_URL, p);
});

const SECRET = "api-processes-secret-0123456789";
const headers = { authorization: `Bearer ${SECRET}`, "content-type": "application/json" };

function serve(env: Record<string, string>, args: string[] = []): Spawned {
  const prefix = testPrefix("api-processes");
  prefixes.push(prefix);
  const spawned = spawnStepwise(["serve", ...args], {
    env: {
      REDIS_URL,
      STEPWISE_PREFIX: prefix,
      STEPWISE_API_KEYS: `ops:admin:${SECRET}`,
      STEPWISE_LOG_LEVEL: "debug",
      ...env,
    },
  });
  children.push(spawned.child);
  return spawned;
}

/** A GET on a connection of its own, so node:cluster hands each to the next process. */
function getFresh(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(url, { agent: false, headers }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The pids of the API processes that logged a request for `url`. */
function answeredBy(output: string, url: string): Set<number> {
  return new Set(
    logLines(output)
      .filter((l) => l.url === url)
      .map((l) => l.pid as number),
  );
}

/** The pids of a process's children (Linux's /proc). */
function childPids(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, "utf8").trim();
    return text ? text.split(/\s+/).map(Number) : [];
  } catch {
    return [];
  }
}

function readyChildren(output: string): { pid: number; apiProcess: number; worker: unknown }[] {
  return logLines(output)
    .filter((l) => typeof l.apiProcess === "number" && l.msg.includes("ready"))
    .map((l) => ({ pid: l.pid as number, apiProcess: l.apiProcess as number, worker: l.worker }));
}

describe("stepwise serve --api-processes", () => {
  it("answers from every process on one port, runs one worker, replaces a dead child, stops on SIGTERM", async () => {
    const port = await freePort();
    const { child, output } = serve({ PORT: String(port), STEPWISE_API_PROCESSES: "3" });
    const base = `http://127.0.0.1:${port}`;
    // The primary says ready once all three are.
    // Three processes each load the sources through tsx: slow beside a busy suite.
    const ready = await until(
      async () => logLines(output()).find((l) => l.apiProcesses === 3 && l.msg.includes("ready")),
      60_000,
    );
    expect(ready.api).toBe(`http://0.0.0.0:${port}`);
    const first = readyChildren(output());
    expect(first.map((c) => c.apiProcess).sort()).toEqual([0, 1, 2]);
    expect(new Set(first.map((c) => c.pid)).size).toBe(3);
    expect(first.find((c) => c.apiProcess === 0)!.worker).toEqual({
      concurrency: 16,
      taskConcurrency: 64,
      fireConcurrency: 64,
    });
    expect(first.filter((c) => c.worker !== false)).toHaveLength(1);

    // Connections are handed round: a dozen fresh ones reach all three processes.
    for (let i = 0; i < 12; i++)
      expect(await getFresh(`${base}/v1/state-machines?limit=${i + 1}`)).toBe(200);
    const urls = Array.from({ length: 12 }, (_, i) => `/v1/state-machines?limit=${i + 1}`);
    const pids = new Set(urls.flatMap((u) => [...answeredBy(output(), u)]));
    expect(pids).toEqual(new Set(first.map((c) => c.pid)));
    // Request ids name their process, so two processes' `req-1` cannot be confused.
    // (A child's log line can reach the primary's output after its response reached us.)
    const logged = () =>
      logLines(output())
        .filter((l) => urls.includes(String(l.url)))
        .map((l) => ({ id: l.reqId as string, pid: l.pid as number }));
    const ids = await until(async () => (logged().length >= 12 ? logged() : undefined), 10_000);
    expect(ids).toHaveLength(12);
    expect(new Set(ids.map((r) => r.id)).size).toBe(12);
    for (const { id, pid } of ids) {
      const index = first.find((c) => c.pid === pid)!.apiProcess;
      expect(id).toMatch(new RegExp(`^p${index}-req-\\d+$`));
    }

    // A STANDARD execution is advanced by the worker in process 0.
    const created = await fetch(`${base}/v1/state-machines`, {
      method: "POST",
      headers,
      body: JSON.stringify({
        name: "p",
        definition: { StartAt: "P", States: { P: { Type: "Pass", End: true } } },
      }),
    });
    expect(created.status).toBe(201);
    const run = await fetch(`${base}/v1/state-machines/p/executions?wait=10`, {
      method: "POST",
      headers,
      body: JSON.stringify({ input: { x: 1 } }),
    });
    expect(await run.json()).toMatchObject({ status: "SUCCEEDED", output: { x: 1 } });

    // A child killed outright is replaced under the same index; the port keeps answering.
    const victim = first.find((c) => c.apiProcess === 1)!;
    process.kill(victim.pid, "SIGKILL");
    const replacement = await until(
      async () => readyChildren(output()).find((c) => c.apiProcess === 1 && c.pid !== victim.pid),
      40_000,
    );
    expect(alive(victim.pid)).toBe(false);
    expect(output()).toContain("API process 1 exited (SIGKILL); starting another");
    for (let i = 0; i < 6; i++) expect(await getFresh(`${base}/health`)).toBe(200);

    child.kill("SIGTERM");
    expect(await exited(child)).toBe(0);
    for (const pid of [...first.map((c) => c.pid), replacement.pid]) expect(alive(pid)).toBe(false);
  }, 150_000);

  it("stops with the children's exit code when they cannot start", async () => {
    const taken = createServer().listen(0, "127.0.0.1");
    await new Promise((r) => taken.once("listening", r));
    const port = (taken.address() as { port: number }).port;
    try {
      const { child, output } = serve({ PORT: String(port) }, ["--api-processes", "2"]);
      expect(await exited(child)).toBe(1);
      expect(output()).toContain(`cannot listen on 0.0.0.0:${port}`);
      expect(output()).toMatch(/API process \d exited \(code 1\) before it was ready: stopping/);
      const pids = logLines(output())
        .map((l) => l.pid as number)
        .filter((pid) => pid !== child.pid);
      for (const pid of pids) expect(alive(pid)).toBe(false);
    } finally {
      taken.close();
    }
  }, 40_000);

  it("lets a child that is signalled while its listen is pending stop, not hang", async () => {
    // Closing a server whose listen node:cluster's primary has not answered yet throws
    // inside Node and leaves the listen unsettled. The primary is frozen to hold a
    // child's listen open, deterministically, while the child gets its SIGTERM.
    const port = await freePort();
    // Without keys a child logs its "authentication is off" warning just before it listens.
    const { child, output } = serve({ PORT: String(port), STEPWISE_API_KEYS: "" }, [
      "--api-processes",
      "2",
    ]);
    const primary = child.pid!;
    await until(async () => (childPids(primary).length === 2 ? true : undefined), 30_000);
    process.kill(primary, "SIGSTOP");
    let target: number;
    try {
      const warned = await until(async () => {
        const pids = logLines(output())
          .filter((l) => l.msg.startsWith("STEPWISE_API_KEYS is not set"))
          .map((l) => l.pid as number);
        return pids.length === 2 ? pids : undefined;
      }, 30_000);
      target = warned[0]!;
      // Its listen request now waits in the frozen primary's channel.
      await new Promise((r) => setTimeout(r, 300));
      process.kill(target, "SIGTERM");
      await new Promise((r) => setTimeout(r, 300));
    } finally {
      process.kill(primary, "SIGCONT");
    }
    expect(await exited(child)).toBe(1);
    expect(output()).toMatch(/API process \d exited \(code 0\) before it was ready: stopping/);
    expect(output()).not.toContain("contained an error no handler caught");
    expect(alive(target)).toBe(false);
  }, 60_000);

  it("refuses a process count out of range with exit 2", async () => {
    const { child, output } = serve({ STEPWISE_API_PROCESSES: "0" });
    expect(await exited(child)).toBe(2);
    expect(output()).toContain(
      "--api-processes/STEPWISE_API_PROCESSES='0': expected a whole number from 1 to 64",
    );
  }, 20_000);
});

describe("loaderArgs", () => {
  it("keeps the loader and heap options and drops what ran code instead of a file", () => {
    expect(
      loaderArgs([
        "--import",
        "file:///x/tsx/loader.mjs",
        "--input-type=module",
        "-e",
        "import x from 'y'",
        "--max-old-space-size=4096",
        "--eval=1",
        "-p",
        "2",
      ]),
    ).toEqual(["--import", "file:///x/tsx/loader.mjs", "--max-old-space-size=4096"]);
  });
});
