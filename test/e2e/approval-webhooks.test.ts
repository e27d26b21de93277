import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

/**
 * Approval webhooks end to end: a receiver on 127.0.0.1 that fails its first
 * request with a 500, the real outbox, relay and BullMQ retries.
 */
const SECRET = "whsec-test-0123456789";
/** One approval, its details the execution's input. */
const HOOKED = {
  StartAt: "Ask",
  States: {
    Ask: {
      Type: "Task",
      Resource: "stepwise:approval",
      Parameters: { Subject: "Ship it?", "Details.$": "$" },
      End: true,
    },
  },
};
let stack: Stack;
let receiver: Server;
const received: { headers: Record<string, string | string[] | undefined>; body: string }[] = [];
let answered = 0;

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      answered++;
      if (answered === 1) {
        res.writeHead(500).end("try again");
        return;
      }
      received.push({ headers: req.headers, body });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  // The service's own relay, as a user configures it: the URL, the secret, and the
  // receiver's address opened for egress (it is on loopback).
  stack = await startStack({
    apiKeys: "",
    egressAllow: "127.0.0.1",
    env: {
      STEPWISE_APPROVAL_WEBHOOK: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
      STEPWISE_WEBHOOK_SECRET: SECRET,
    },
  });
  const created = await stack.client.post("/v1/state-machines", {
    name: "hooked",
    definition: HOOKED,
  });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await stack?.close();
  receiver?.close();
});

function verify(header: string, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header);
  if (!match) return false;
  const expected = createHmac("sha256", SECRET).update(`${match[1]}.${body}`).digest("hex");
  return expected === match[2] && Math.abs(Date.now() / 1000 - Number(match[1])) < 300;
}

describe("approval webhooks", () => {
  it("created and decided are delivered, signed, the first after a 500", async () => {
    const { client } = stack;
    const started = await client.post("/v1/state-machines/hooked/executions", {
      input: { version: "1.2.3" },
    });
    const executionId = started.body.executionId as string;
    const created = await client.until(async () =>
      received.find((r) => JSON.parse(r.body).event === "approval.created"),
    );
    expect(answered).toBeGreaterThanOrEqual(2); // the 500, then the retry
    const payload = JSON.parse(created.body);
    expect(verify(String(created.headers["stepwise-signature"]), created.body)).toBe(true);
    expect(verify(String(created.headers["stepwise-signature"]), created.body + " ")).toBe(false);
    expect(payload.approval).toMatchObject({ executionId, subject: "Ship it?" });

    const decided = await client.post(`/v1/approvals/${payload.approval.approvalId}/decisions`, {
      decision: "APPROVE",
      envelopeHash: payload.approval.envelopeHash,
    });
    expect(decided.body).toMatchObject({
      status: "APPROVED",
      decisions: [{ approver: "local", decision: "APPROVE" }],
    });
    const delivered = await client.until(async () =>
      received.find((r) => JSON.parse(r.body).event === "approval.decided"),
    );
    expect(verify(String(delivered.headers["stepwise-signature"]), delivered.body)).toBe(true);
    expect(JSON.parse(delivered.body).approval.status).toBe("APPROVED");
    const done = await client.until(async () => {
      const r = await client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
      return r.body.status === "RUNNING" ? undefined : r.body;
    });
    expect(done.status).toBe("SUCCEEDED");
  });

  it("expired and cancelled are delivered too", async () => {
    const { client } = stack;
    const expiring = await client.post("/v1/state-machines", {
      name: "hooked-expiring",
      definition: {
        StartAt: "Ask",
        States: {
          Ask: {
            Type: "Task",
            Resource: "stepwise:approval",
            Parameters: { Subject: "Soon gone", ExpiresInSeconds: 1 },
            End: true,
          },
        },
      },
    });
    expect(expiring.status).toBe(201);
    const late = await client.post("/v1/state-machines/hooked-expiring/executions", {});
    const stopped = await client.post("/v1/state-machines/hooked/executions", {
      input: { stop: true },
    });
    const eventsOf = (executionId: string) =>
      received
        .map((r) => JSON.parse(r.body))
        .filter((p) => p.approval.executionId === executionId)
        .map((p) => p.event as string);
    await client.until(async () =>
      eventsOf(stopped.body.executionId).includes("approval.created") ? true : undefined,
    );
    await client.post(`/v1/executions/${encodeURIComponent(stopped.body.executionId)}/stop`, {});
    await client.until(async () =>
      eventsOf(stopped.body.executionId).includes("approval.cancelled") ? true : undefined,
    );
    await client.until(async () =>
      eventsOf(late.body.executionId).includes("approval.expired") ? true : undefined,
    );
    const expired = received
      .map((r) => JSON.parse(r.body))
      .find((p) => p.event === "approval.expired");
    expect(expired.approval.status).toBe("EXPIRED");
  });
});

describe("an approval webhook the egress policy refuses", () => {
  it("is told once per approval, with the reason, and not retried", async () => {
    // No STEPWISE_EGRESS_ALLOW: the receiver on loopback is refused, as an internal address would be.
    const refused = await startStack({
      apiKeys: "",
      env: {
        STEPWISE_APPROVAL_WEBHOOK: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/refused`,
        STEPWISE_WEBHOOK_SECRET: SECRET,
      },
    });
    try {
      await refused.client.post("/v1/state-machines", {
        name: "hooked",
        definition: HOOKED,
      });
      const started = await refused.client.post("/v1/state-machines/hooked/executions", {});
      const executionId = started.body.executionId as string;
      const approvalId = await refused.client.until(async () => {
        const r = await refused.client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
        return r.body.pendingTasks?.[0]?.approvalId as string | undefined;
      });
      const record = (await refused.client.get(`/v1/approvals/${approvalId}`)).body;
      // A second event of the same approval (decided, approved) is refused too: still one line.
      await refused.client.post(`/v1/approvals/${approvalId}/decisions`, {
        decision: "APPROVE",
        envelopeHash: record.envelopeHash,
      });
      const told = () =>
        refused.logs().filter((l) => String(l.msg).includes(`approval ${approvalId}:`));
      await refused.client.until(async () => (told().length > 0 ? true : undefined));
      // Time for retries, had there been any (the first retry would come after 1 s).
      await new Promise((resolve) => setTimeout(resolve, 2_500));
      expect(told()).toHaveLength(1);
      expect(told()[0]!.msg).toMatch(
        /refused by the egress policy.*STEPWISE_EGRESS_ALLOW.*not retried/,
      );
      expect(received.some((r) => r.body.includes(approvalId))).toBe(false);
    } finally {
      await refused.close();
    }
  }, 30_000);
});
