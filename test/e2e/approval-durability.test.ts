import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis } from "../integration/helpers.js";
import { Client } from "./client.js";
import { exited, logLine, logLines, spawnBin, testPrefix, type Spawned } from "./processes.js";

/**
 * A pending approval is durable state like any other: it survives its worker
 * being SIGKILLed and its Redis (AOF on) restarting, with the decisions it had,
 * its hash, and its expiry timer. Its own redis-server, `stepwise worker` in a
 * process of its own, the API (`stepwise serve --no-worker`) on a real socket.
 */
const ADMIN = "admin-secret-0123456789abcdef";
const ALICE = "alice-secret-0123456789abcdef";
const BOB = "bob-secret-0123456789abcdefgh";

let redis: Awaited<ReturnType<typeof startRedis>>;
let api: Spawned;
let client: Client;
/** What the API and the workers share: their Redis, their prefix, short leases and locks. */
let env: Record<string, string>;

beforeAll(async () => {
  redis = await startRedis();
  env = {
    REDIS_URL: redis.url,
    STEPWISE_PREFIX: testPrefix("approval-durability"),
    // A killed worker's jobs come back in about a second.
    STEPWISE_LEASE_MS: "1000",
    STEPWISE_LOCK_MS: "1500",
    STEPWISE_STALLED_MS: "500",
  };
  api = spawnBin(["serve", "--no-worker"], {
    env: {
      ...env,
      PORT: "0",
      HOST: "127.0.0.1",
      STEPWISE_API_KEYS: `ops:admin:${ADMIN},alice:approve:${ALICE},bob:approve:${BOB}`,
      STEPWISE_APPROVER_GROUPS: "alice=finance;bob=finance",
    },
  });
  client = new Client(String((await logLine(api, /ready: API /)).api), ADMIN);
});
afterAll(async () => {
  let code: number | null = 0;
  if (api) {
    api.child.kill("SIGTERM");
    code = await exited(api.child);
  }
  await redis?.stop();
  // As startStack's close: a clean stop, and no error line however Redis came and went.
  const errors = api ? logLines(api.output()).filter((line) => line.level >= 50) : [];
  expect({ code, errors }, api?.output()).toEqual({ code: 0, errors: [] });
});

/** `stepwise worker`, once it takes jobs. */
async function startWorker(): Promise<Spawned> {
  const worker = spawnBin(["worker"], { env });
  await logLine(worker, /worker ready/);
  return worker;
}

/** The execution's record once it has ended. */
function ended(executionId: string, ms: number): Promise<any> {
  return client.until(async () => {
    const r = await client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.status === 200 && r.body.status !== "RUNNING" ? r.body : undefined;
  }, ms);
}

async function pendingApproval(executionId: string): Promise<any> {
  const id = await client.until(async () => {
    const r = await client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.body.pendingTasks?.[0]?.approvalId as string | undefined;
  });
  return (await client.get(`/v1/approvals/${id}`)).body;
}

describe("a pending approval", () => {
  it("survives a worker SIGKILL and a Redis restart with AOF", async () => {
    const definition = {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "stepwise:approval",
          Parameters: {
            Subject: "Wire 50000 EUR",
            "Details.$": "$",
            Approvers: ["finance"],
            RequiredApprovals: 2,
            "ExpiresInSeconds.$": "$.expires",
          },
          End: true,
        },
      },
    };
    expect((await client.post("/v1/state-machines", { name: "wire", definition })).status).toBe(
      201,
    );
    let worker = await startWorker();
    const started = await client.post("/v1/state-machines/wire/executions", {
      input: { to: "ACME", expires: 3600 },
    });
    const expiring = await client.post("/v1/state-machines/wire/executions", {
      input: { to: "Late", expires: 4 },
    });
    const executionId = started.body.executionId as string;
    const before = await pendingApproval(executionId);
    await pendingApproval(expiring.body.executionId);
    const first = await client.post(
      `/v1/approvals/${before.approvalId}/decisions`,
      { decision: "APPROVE", envelopeHash: before.envelopeHash },
      { key: ALICE },
    );
    expect(first.body.status).toBe("PENDING");

    worker.child.kill("SIGKILL");
    await exited(worker.child);
    expect(worker.child.signalCode).toBe("SIGKILL");
    await redis.restart();

    // While Redis comes back the API answers 503 with Retry-After (it does not hang);
    // a client tries again, as this one does.
    const after = await client.until(async () => {
      const r = await client.get(`/v1/approvals/${before.approvalId}`);
      return r.status === 503 ? undefined : r.body;
    });
    expect(after).toMatchObject({
      status: "PENDING",
      envelopeHash: before.envelopeHash,
      decisions: [{ approver: "alice", decision: "APPROVE" }],
    });
    const inbox = await client.get("/v1/approvals?status=PENDING&approver=finance", {
      key: BOB,
    });
    expect(inbox.body.items.map((a: any) => a.approvalId)).toContain(before.approvalId);

    worker = await startWorker();
    try {
      const second = await client.post(
        `/v1/approvals/${before.approvalId}/decisions`,
        { decision: "APPROVE", envelopeHash: before.envelopeHash },
        { key: BOB },
      );
      expect(second.body.status).toBe("APPROVED");
      const done = await ended(executionId, 15_000);
      expect(done.status).toBe("SUCCEEDED");
      expect(done.output).toMatchObject({
        decision: "APPROVED",
        envelopeHash: before.envelopeHash,
        decisions: [{ approver: "alice" }, { approver: "bob" }],
      });
      // The expiry timer armed before both failures still fires.
      const late = await ended(expiring.body.executionId, 15_000);
      expect(late).toMatchObject({ status: "FAILED", error: "Stepwise.ApprovalExpired" });
    } finally {
      worker.child.kill("SIGTERM");
      await exited(worker.child);
    }
  }, 60_000);
});
