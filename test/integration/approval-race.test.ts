import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { makeKeys } from "../../runtime/store/keys.js";
import { JobQueues } from "../../runtime/worker/queues.js";
import { bullConnection, RedisClient } from "../../runtime/store/redis.js";
import { Scheduler } from "../../runtime/worker/scheduler.js";
import { resolveSettings } from "../../runtime/settings.js";
import { createMachine, harness, type Harness, ONE_SHARD } from "./helpers.js";

/**
 * The expiry timer fired (its TimerFired is in the run's inbox) but the run has not
 * processed it yet: a decision arriving now must not count, or the record would
 * say APPROVED while the execution fails with Stepwise.ApprovalExpired.
 */
let h: Harness;
beforeAll(async () => {
  // Reads one shard's keys by name (helpers.ts ONE_SHARD).
  h = await harness(ONE_SHARD);
});
afterAll(async () => {
  await h.close();
});

describe("a decision racing the expiry timer", () => {
  it("is refused once the timer has fired, and record and execution agree", async () => {
    await createMachine(h.runtime, "race", {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "stepwise:approval",
          Parameters: { Subject: "Race", ExpiresInSeconds: 1 },
          End: true,
        },
      },
    });
    const worker = await h.startWorker();
    const { executionId } = await h.runtime.startExecution("race", {});
    let approvalId: string | undefined;
    for (let i = 0; i < 200 && !approvalId; i++) {
      approvalId = (await h.runtime.pendingTasks(executionId))[0]?.approvalId;
      if (!approvalId) await new Promise((r) => setTimeout(r, 20));
    }
    expect(approvalId).toBeDefined();
    // No worker from here on: the timer fires (claimDue) but nobody steps the run.
    await worker.close();
    h.workers.length = 0;
    await new Promise((r) => setTimeout(r, 1100));
    const settings = resolveSettings({ redisUrl: h.redisUrl, prefix: h.prefix });
    const keys = makeKeys(h.prefix);
    const client = new RedisClient(h.redisUrl);
    const connection = bullConnection(h.redisUrl, "race-test");
    const queues = new JobQueues(connection, keys);
    try {
      await new Scheduler(client, keys, queues, settings).tick();
      const record = await h.runtime.getApproval(approvalId!);
      expect(record.status).toBe("PENDING");
      await expect(
        h.runtime.decideApproval(
          approvalId!,
          { name: "alice", groups: "any" },
          { decision: "APPROVE", envelopeHash: record.envelopeHash },
        ),
      ).rejects.toMatchObject({ code: "ApprovalNotPending", message: /EXPIRED/ });
      expect((await h.runtime.getApproval(approvalId!)).status).toBe("EXPIRED");
    } finally {
      await queues.close();
      connection.disconnect();
      await client.close();
    }
    await h.startWorker();
    const done = await h.runtime.waitForExecution(executionId, 10_000);
    expect(done).toMatchObject({ status: "FAILED", error: "Stepwise.ApprovalExpired" });
    const record = await h.runtime.getApproval(approvalId!);
    expect(record).toMatchObject({ status: "EXPIRED", decisions: [] });
  });
});
