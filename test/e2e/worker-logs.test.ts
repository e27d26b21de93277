import type { ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { createRedisRuntime } from "../../runtime/runtime.js";
import { exited, logLines, spawnStepwise, until } from "./processes.js";
import { deleteKeys } from "../integration/helpers.js";
import { REDIS_URL } from "./stack.js";

/**
 * `stepwise worker` as a process: STEPWISE_CONCURRENCY is what it runs with, its
 * logs are pino JSON lines like the API's, and an execution that fails gets one
 * line naming its error, however many workers hear of it.
 */
const children: ChildProcess[] = [];
const prefixes: string[] = [];

afterEach(() => {
  for (const child of children.splice(0)) if (child.exitCode === null) child.kill("SIGKILL");
});

afterAll(async () => {
  for (const p of prefixes) await deleteKeys(REDIS_URL, p);
});

function worker(env: Record<string, string>) {
  const spawned = spawnStepwise(["worker"], { env: { REDIS_URL, LOG_LEVEL: "info", ...env } });
  children.push(spawned.child);
  return spawned;
}

describe("stepwise worker logs", () => {
  it("runs with STEPWISE_CONCURRENCY and logs one JSON line per failed execution", async () => {
    const prefix = `stepwise-e2e-wlog-${randomBytes(4).toString("hex")}`;
    prefixes.push(prefix);
    const a = worker({ STEPWISE_PREFIX: prefix, STEPWISE_CONCURRENCY: "7" });
    const b = worker({ STEPWISE_PREFIX: prefix });
    const ready = (output: () => string) =>
      until(async () => logLines(output()).find((l) => l.msg.includes("worker ready")));
    expect(await ready(a.output)).toMatchObject({ level: 30, concurrency: 7, prefix });
    expect(await ready(b.output)).toMatchObject({ concurrency: 16 });

    const runtime = createRedisRuntime({ redisUrl: REDIS_URL, prefix });
    try {
      await runtime.createStateMachine("breaks", {
        StartAt: "F",
        States: { F: { Type: "Fail", Error: "Order.Declined", Cause: "card expired" } },
      });
      await runtime.createStateMachine("works", {
        StartAt: "P",
        States: { P: { Type: "Pass", End: true } },
      });
      const failed = await runtime.startExecution("breaks", { input: {} });
      const fine = await runtime.startExecution("works", { input: {} });
      expect((await runtime.waitForExecution(failed.executionId, 10_000)).status).toBe("FAILED");
      expect((await runtime.waitForExecution(fine.executionId, 10_000)).status).toBe("SUCCEEDED");

      const failureLines = () =>
        [...logLines(a.output()), ...logLines(b.output())].filter(
          (l) => l.executionId !== undefined,
        );
      const [line] = await until(async () =>
        failureLines().length > 0 ? failureLines() : undefined,
      );
      expect(line).toMatchObject({
        level: 40,
        executionId: failed.executionId,
        status: "FAILED",
        error: "Order.Declined",
        cause: "card expired",
      });
      expect(line!.msg).toContain("FAILED: Order.Declined");
      // The other worker heard the same end; the claim keeps it to one line, and the
      // execution that succeeded has none. (Both workers are still running to see it.)
      const later = await runtime.startExecution("works", { input: { again: true } });
      await runtime.waitForExecution(later.executionId, 10_000);
      expect(failureLines()).toHaveLength(1);
    } finally {
      await runtime.close();
    }
    // Every line either process wrote is JSON.
    for (const { output } of [a, b]) {
      const text = output().trim();
      expect(logLines(text)).toHaveLength(text.split("\n").length);
    }
    a.child.kill("SIGTERM");
    b.child.kill("SIGTERM");
    expect(await exited(a.child)).toBe(0);
    expect(await exited(b.child)).toBe(0);
  }, 60_000);
});
