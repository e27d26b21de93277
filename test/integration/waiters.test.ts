import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { makeKeys } from "../../runtime/store/keys.js";
import { EndWaiters } from "../../runtime/executions/waiters.js";
import { createMachine, fullHistory, harness, type Harness, ONE_SHARD } from "./helpers.js";

/**
 * Waiting for an execution's end (`?wait=`): woken by the commit's PUBLISH on
 * `<base>ended`, with a slow re-read in case a message is lost, and no waiter left
 * behind after an answer, a timeout or a close.
 */
let h: Harness;
const waiters: EndWaiters[] = [];
/** Longer than any test runs: a wait that ends proves the message woke it. */
const NEVER = 3_600_000;

beforeEach(async () => {
  // Reads one shard's keys by name (helpers.ts ONE_SHARD).
  h = await harness(ONE_SHARD);
  await h.startWorker();
  await createMachine(h.runtime, "approve", {
    StartAt: "Ask",
    States: {
      Ask: {
        Type: "Task",
        Resource: "arn:aws:states:::stepwise:waitForTaskToken",
        Parameters: { "token.$": "$$.Task.Token" },
        End: true,
      },
    },
  });
});
afterEach(async () => {
  await Promise.all(waiters.splice(0).map((w) => w.close()));
  await h.close();
});

function endWaiters(options: { channel?: string; fallbackMs?: number } = {}): EndWaiters {
  const w = new EndWaiters(
    { redisUrl: h.redisUrl },
    [options.channel ?? makeKeys(h.prefix).endedChannel],
    options.fallbackMs ?? NEVER,
  );
  waiters.push(w);
  return w;
}

/** The status alone, as the runtime reads it for waiters (null: no such execution). */
function statusOf(executionId: string): () => Promise<string | null> {
  return () =>
    h.runtime.describeExecution(executionId).then(
      (record) => record.status,
      () => null,
    );
}

/** Starts an execution that parks on a task token; resolves once the token exists. */
async function parked(): Promise<{ executionId: string; token: string }> {
  const { executionId } = await h.runtime.startExecution("approve", {});
  for (;;) {
    const scheduled = (await fullHistory(h.runtime, executionId)).find(
      (e) => e.type === "TaskScheduled",
    );
    if (scheduled) {
      const { token } = JSON.parse(String(scheduled.taskScheduledEventDetails!.parameters)) as {
        token: string;
      };
      return { executionId, token };
    }
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe("waiting for an execution to end", () => {
  it("is woken by the end's message (no re-read would come before the test's timeout)", async () => {
    const w = endWaiters();
    const { executionId, token } = await parked();
    const waiting = w.wait(
      executionId,
      NEVER,
      () => h.runtime.describeExecution(executionId),
      statusOf(executionId),
    );
    await h.runtime.sendTaskSuccess(token, { approved: true });
    const record = await waiting;
    expect(record).toMatchObject({ status: "SUCCEEDED", output: { approved: true } });
    expect(w.size).toBe(0);
  });

  it("misses no end that happens while it reads the status (subscribed before the first read)", async () => {
    const w = endWaiters();
    const { executionId, token } = await parked();
    let reads = 0;
    const record = await w.wait(
      executionId,
      NEVER,
      () => h.runtime.describeExecution(executionId),
      async () => {
        const current = await statusOf(executionId)();
        if (reads++ > 0) return current;
        // The execution ends after this read and before the waiter sleeps.
        await h.runtime.sendTaskSuccess(token, "late");
        while ((await h.runtime.describeExecution(executionId)).status === "RUNNING") {
          await new Promise((r) => setTimeout(r, 5));
        }
        return current;
      },
    );
    expect(current(record)).toEqual({ status: "SUCCEEDED", output: "late" });
    // The end's message, heard during that read, is kept: the record is read at once,
    // without a second read of the status.
    expect(reads).toBe(1);
  });

  it("re-checks read the status only, once per interval for all the waiters of an execution", async () => {
    const w = endWaiters({ channel: `${h.prefix}:nobody-publishes-here`, fallbackMs: 100 });
    const { executionId } = await parked();
    let statusReads = 0;
    let recordReads = 0;
    const waiting = Array.from({ length: 20 }, () =>
      w.wait(
        executionId,
        NEVER,
        () => {
          recordReads++;
          return h.runtime.describeExecution(executionId);
        },
        () => {
          statusReads++;
          return statusOf(executionId)();
        },
      ),
    );
    await new Promise((r) => setTimeout(r, 1_000));
    // Still running: nobody read the record, and the 20 waiters shared their re-checks.
    expect(recordReads).toBe(0);
    expect(statusReads).toBeGreaterThan(2);
    expect(statusReads).toBeLessThanOrEqual(25);
    await h.runtime.stopExecution(executionId);
    const records = await Promise.all(waiting);
    expect(records.every((r) => r.status === "ABORTED")).toBe(true);
    // The record is read once per waiter, to answer it.
    expect(recordReads).toBe(20);
    expect(w.size).toBe(0);
  });

  it("re-reads on the fallback interval when no message comes", async () => {
    // Subscribed to a channel nobody publishes on: only the re-read can notice the end.
    const w = endWaiters({ channel: `${h.prefix}:nobody-publishes-here`, fallbackMs: 50 });
    const { executionId } = await parked();
    const waiting = w.wait(
      executionId,
      NEVER,
      () => h.runtime.describeExecution(executionId),
      statusOf(executionId),
    );
    await h.runtime.stopExecution(executionId, { error: "Gone" });
    expect(await waiting).toMatchObject({ status: "ABORTED", error: "Gone" });
    expect(w.size).toBe(0);
  });

  it("answers RUNNING when the wait runs out, and forgets the waiter", async () => {
    const w = endWaiters();
    const { executionId } = await parked();
    const record = await w.wait(
      executionId,
      50,
      () => h.runtime.describeExecution(executionId),
      statusOf(executionId),
    );
    expect(record.status).toBe("RUNNING");
    expect(w.size).toBe(0);
  });

  it("answers an ended execution at once and refuses unknown ones, leaving no waiter", async () => {
    const w = endWaiters();
    const { executionId } = await parked();
    await h.runtime.stopExecution(executionId);
    expect(
      (
        await w.wait(
          executionId,
          NEVER,
          () => h.runtime.describeExecution(executionId),
          statusOf(executionId),
        )
      ).status,
    ).toBe("ABORTED");
    const unknown = `${executionId}-nope`;
    await expect(
      w.wait(unknown, NEVER, () => h.runtime.describeExecution(unknown), statusOf(unknown)),
    ).rejects.toMatchObject({ code: "ExecutionDoesNotExist" });
    expect(w.size).toBe(0);
  });

  it("close lets pending waits answer with the record as it is, and drops them", async () => {
    const w = endWaiters();
    const { executionId } = await parked();
    const first = w.wait(
      executionId,
      NEVER,
      () => h.runtime.describeExecution(executionId),
      statusOf(executionId),
    );
    const second = w.wait(
      executionId,
      NEVER,
      () => h.runtime.describeExecution(executionId),
      statusOf(executionId),
    );
    expect(w.size).toBe(1);
    await w.close();
    expect((await first).status).toBe("RUNNING");
    expect((await second).status).toBe("RUNNING");
    expect(w.size).toBe(0);
  });

  it("the runtime's waitForExecution answers when a stop ends the execution", async () => {
    const { executionId } = await parked();
    const waiting = h.runtime.waitForExecution(executionId, 60_000);
    await h.runtime.stopExecution(executionId, { cause: "enough" });
    expect(await waiting).toMatchObject({ status: "ABORTED", cause: "enough" });
  });
});

function current(record: { status: string; output?: unknown }): object {
  return { status: record.status, output: record.output };
}
