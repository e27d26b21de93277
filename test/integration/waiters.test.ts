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

describe("an end this process committed (endedHere)", () => {
  /** Reads that count themselves; the execution reads RUNNING until `ended`. */
  function countedReads(executionId: string) {
    const reads = { describe: 0, status: 0, ended: false };
    const record = () => ({
      executionId,
      startedAt: "2026-12-06T00:00:00.000Z",
      status: reads.ended ? ("SUCCEEDED" as const) : ("RUNNING" as const),
    });
    return {
      reads,
      store: {
        describe: async () => (reads.describe++, record()),
        status: async () => (reads.status++, record().status),
      },
    };
  }
  const end = (executionId: string) => ({
    executionId,
    startedAt: "2026-12-06T00:00:00.000Z",
    status: "SUCCEEDED" as const,
    output: { done: true },
    stoppedAt: "2026-12-06T00:00:01.000Z",
  });
  const startedHere = (executionId: string) => ({
    executionId,
    startedAt: "2026-12-06T00:00:00.000Z",
    created: true,
    advancedHere: true,
  });

  it("answers a result wait from the end, with no read at all when this process started it", async () => {
    const w = endWaiters();
    // Before the subscription holds, the status is read even so: the end may have been missed.
    const first = "arn:aws:states:us-east-1:123456789012:execution:m:here-0";
    const early = countedReads(first);
    const warming = w.waitResult(first, NEVER, early.store, startedHere(first));
    await new Promise((r) => setTimeout(r, 50));
    expect(early.reads.status).toBe(1);
    w.endedHere(first, end(first));
    expect(await warming).toEqual(end(first));

    const id = "arn:aws:states:us-east-1:123456789012:execution:m:here-1";
    const { reads, store } = countedReads(id);
    const waiting = w.waitResult(id, NEVER, store, startedHere(id));
    await new Promise((r) => setTimeout(r, 50));
    expect(w.size).toBe(1);
    w.endedHere(id, end(id));
    expect(await waiting).toEqual(end(id));
    expect(reads).toMatchObject({ describe: 0, status: 0 });
    expect(w.size).toBe(0);
  });

  it("answers a wait that comes after the end from the end kept, and reads the status of one it did not start", async () => {
    const w = endWaiters();
    // The subscription holds once a wait has waited for it.
    const warm = "arn:aws:states:us-east-1:123456789012:execution:m:warm";
    const warming = w.waitResult(warm, NEVER, countedReads(warm).store);
    w.endedHere(warm, end(warm));
    await warming;
    const id = "arn:aws:states:us-east-1:123456789012:execution:m:here-2";
    const { reads, store } = countedReads(id);
    w.endedHere(id, end(id));
    expect(await w.waitResult(id, NEVER, store, startedHere(id))).toEqual(end(id));
    expect(reads).toMatchObject({ describe: 0, status: 0 });

    // Not started here: the first status is read (the end may have come from elsewhere).
    const other = "arn:aws:states:us-east-1:123456789012:execution:m:elsewhere";
    const elsewhere = countedReads(other);
    const waiting = w.waitResult(other, NEVER, elsewhere.store);
    await new Promise((r) => setTimeout(r, 50));
    expect(elsewhere.reads.status).toBe(1);
    w.endedHere(other, end(other));
    expect(await waiting).toEqual(end(other));
    expect(elsewhere.reads.describe).toBe(0);
  });

  it("a whole-record wait is woken by the end and reads the record", async () => {
    const w = endWaiters();
    const { executionId } = await parked();
    let reads = 0;
    const waiting = w.wait(
      executionId,
      NEVER,
      () => (reads++, h.runtime.describeExecution(executionId)),
      statusOf(executionId),
    );
    await new Promise((r) => setTimeout(r, 50));
    await h.runtime.stopExecution(executionId);
    w.endedHere(executionId, { ...end(executionId), status: "ABORTED" });
    expect((await waiting).status).toBe("ABORTED");
    expect(reads).toBeGreaterThan(0);
  });
});

function current(record: { status: string; output?: unknown }): object {
  return { status: record.status, output: record.output };
}
