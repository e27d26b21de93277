import type { AddressInfo } from "node:net";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseApiKeys } from "../../api/auth.js";
import { buildServer } from "../../api/server.js";
import { exited, harness, spawnWorker, startRedis, type Harness } from "../integration/helpers.js";
import { Client } from "./client.js";

/**
 * A pending approval is durable state like any other: it survives its worker
 * being SIGKILLed and its Redis (AOF on) restarting, with the decisions it had,
 * its hash, and its expiry timer. Its own redis-server, a worker in another
 * process, the API on a real socket.
 */
const ADMIN = "admin-secret-0123456789abcdef";
const ALICE = "alice-secret-0123456789abcdef";
const BOB = "bob-secret-0123456789abcdefgh";

let redis: Awaited<ReturnType<typeof startRedis>>;
let h: Harness;
let app: FastifyInstance;
let client: Client;

beforeAll(async () => {
  redis = await startRedis();
  h = await harness({ redisUrl: redis.url });
  app = await buildServer({
    runtime: h.runtime,
    apiKeys: parseApiKeys(
      `ops:admin:${ADMIN},alice:approve:${ALICE},bob:approve:${BOB}`,
      "alice=finance;bob=finance",
    ),
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  client = new Client(`http://127.0.0.1:${(app.server.address() as AddressInfo).port}`, ADMIN);
});
afterAll(async () => {
  await app?.close();
  await h?.close();
  await redis?.stop();
});

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
    let worker = spawnWorker(h.prefix, {}, redis.url);
    await worker.ready;
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

    const killed = exited(worker);
    worker.kill("SIGKILL");
    await killed;
    expect(worker.signalCode).toBe("SIGKILL");
    await redis.restart();

    const after = (await client.get(`/v1/approvals/${before.approvalId}`)).body;
    expect(after).toMatchObject({
      status: "PENDING",
      envelopeHash: before.envelopeHash,
      decisions: [{ approver: "alice", decision: "APPROVE" }],
    });
    const inbox = await client.get("/v1/approvals?status=PENDING&approver=finance", {
      key: BOB,
    });
    expect(inbox.body.items.map((a: any) => a.approvalId)).toContain(before.approvalId);

    worker = spawnWorker(h.prefix, {}, redis.url);
    await worker.ready;
    try {
      const second = await client.post(
        `/v1/approvals/${before.approvalId}/decisions`,
        { decision: "APPROVE", envelopeHash: before.envelopeHash },
        { key: BOB },
      );
      expect(second.body.status).toBe("APPROVED");
      const done = await h.runtime.waitForExecution(executionId, 15_000);
      expect(done.status).toBe("SUCCEEDED");
      expect(done.output).toMatchObject({
        decision: "APPROVED",
        envelopeHash: before.envelopeHash,
        decisions: [{ approver: "alice" }, { approver: "bob" }],
      });
      // The expiry timer armed before both failures still fires.
      const late = await h.runtime.waitForExecution(expiring.body.executionId, 15_000);
      expect(late).toMatchObject({ status: "FAILED", error: "Stepwise.ApprovalExpired" });
    } finally {
      const gone = exited(worker);
      worker.kill("SIGTERM");
      await gone;
    }
  }, 60_000);
});
