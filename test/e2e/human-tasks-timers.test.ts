import { createHmac } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client } from "./client.js";
import {
  exited,
  logLine,
  logLines,
  spawnBin,
  testPrefix,
  until,
  type Spawned,
} from "./processes.js";
import { deleteKeys, REDIS_URL } from "./stack.js";

/**
 * Human tasks' durable timers (issue 40) through the binary: `DueInSeconds`,
 * `Reminders` (signed `approval.reminder` webhooks) and `Escalation` (a group added,
 * `approval.escalated`). The API (`stepwise serve --no-worker`) and `stepwise worker`
 * run as processes of their own, so a worker can be SIGKILLed while the timers are
 * due: the next worker fires each once, neither losing nor repeating one.
 */
const ADMIN = "admin-secret-0123456789abcdef";
const ALICE = "alice-secret-0123456789abcdef";
const LENA = "lena-secret-0123456789abcdefgh";
const SECRET = "whsec-human-tasks-0123456789";

const definition = {
  StartAt: "Ask",
  States: {
    Ask: {
      Type: "Task",
      Resource: "arn:aws:states:::stepwise:approval",
      Parameters: {
        Subject: "Approve the quarterly budget",
        "Details.$": "$",
        Approvers: ["finance"],
        DueInSeconds: 3600,
        "Reminders.$": "$.reminders",
        "Escalation.$": "$.escalation",
      },
      End: true,
    },
  },
};

let receiver: Server;
const received: { event: string; approval: any; signature: string; body: string }[] = [];
let api: Spawned;
let client: Client;
let env: Record<string, string>;
const workers: Spawned[] = [];

beforeAll(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (chunk: Buffer) => (body += chunk.toString("utf8")));
    req.on("end", () => {
      const parsed = JSON.parse(body);
      received.push({
        event: parsed.event,
        approval: parsed.approval,
        signature: String(req.headers["stepwise-signature"]),
        body,
      });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  env = {
    REDIS_URL,
    STEPWISE_PREFIX: testPrefix("human-tasks-timers"),
    STEPWISE_LEASE_MS: "1000",
    STEPWISE_LOCK_MS: "1500",
    STEPWISE_STALLED_MS: "500",
    STEPWISE_API_KEYS: `ops:admin:${ADMIN},alice:approve:${ALICE},lena:approve:${LENA}`,
    STEPWISE_APPROVER_GROUPS: "alice=finance;lena=leads",
    STEPWISE_APPROVAL_WEBHOOK: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`,
    STEPWISE_WEBHOOK_SECRET: SECRET,
    STEPWISE_EGRESS_ALLOW: "127.0.0.1",
  };
  api = spawnBin(["serve", "--no-worker"], { env: { ...env, PORT: "0", HOST: "127.0.0.1" } });
  client = new Client(String((await logLine(api, /ready: API /, 30_000)).api), ADMIN);
  const created = await client.post("/v1/state-machines", { name: "budget", definition });
  expect(created.status).toBe(201);
}, 60_000);

afterAll(async () => {
  for (const worker of workers) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) {
      worker.child.kill("SIGTERM");
      await exited(worker.child).catch(() => worker.child.kill("SIGKILL"));
    }
  }
  let code: number | null = 0;
  if (api) {
    api.child.kill("SIGTERM");
    code = await exited(api.child);
  }
  receiver?.close();
  const redis = new Redis(REDIS_URL);
  await deleteKeys(redis, env.STEPWISE_PREFIX!);
  redis.disconnect();
  const errors = api ? logLines(api.output()).filter((line) => line.level >= 50) : [];
  expect({ code, errors }).toEqual({ code: 0, errors: [] });
}, 60_000);

async function startWorker(): Promise<Spawned> {
  const worker = spawnBin(["worker"], { env });
  workers.push(worker);
  await logLine(worker, /worker ready/, 30_000);
  return worker;
}

async function stopWorker(worker: Spawned): Promise<void> {
  worker.child.kill("SIGTERM");
  await exited(worker.child);
}

const path = (executionId: string) => `/v1/executions/${encodeURIComponent(executionId)}`;

async function start(input: object): Promise<{ executionId: string; approval: any }> {
  const started = await client.post("/v1/state-machines/budget/executions", { input });
  expect(started.status).toBe(201);
  const executionId = started.body.executionId as string;
  const approvalId = await client.until(async () => {
    const r = await client.get(path(executionId));
    return r.body.pendingTasks?.[0]?.approvalId as string | undefined;
  }, 30_000);
  const approval = (await client.get(`/v1/approvals/${approvalId}`)).body;
  return { executionId, approval };
}

function hooks(approvalId: string, event: string) {
  return received.filter((r) => r.approval.approvalId === approvalId && r.event === event);
}

function signed(r: { signature: string; body: string }): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(r.signature);
  return (
    match !== null &&
    createHmac("sha256", SECRET).update(`${match[1]}.${r.body}`).digest("hex") === match[2]
  );
}

async function historyTypes(executionId: string): Promise<string[]> {
  const r = await client.get(`${path(executionId)}/history?limit=1000`);
  return (r.body.items as { type: string }[]).map((e) => e.type);
}

describe("reminders, escalation and due dates", () => {
  it("sends signed reminders on time, escalates to a group whose member then decides, and shows the due date", async () => {
    const worker = await startWorker();
    const { executionId, approval } = await start({
      reminders: [{ AfterSeconds: 1 }, { AfterSeconds: 2 }],
      escalation: { AfterSeconds: 2.5, To: ["leads"] },
    });
    const created = Date.parse(approval.createdAt);
    expect(Date.parse(approval.dueAt) - created).toBe(3600_000);
    expect(approval.reminders).toEqual([1, 2]);
    expect(approval.escalation).toEqual({ afterSeconds: 2.5, to: ["leads"] });
    const id = approval.approvalId as string;

    // Inbox filters: due before, overdue, sorted by due date.
    const soon = new Date(created + 7200_000).toISOString();
    const listed = await client.get(
      `/v1/approvals?status=PENDING&dueBefore=${encodeURIComponent(soon)}&sort=due`,
    );
    expect(listed.body.items.map((a: any) => a.approvalId)).toContain(id);
    const early = new Date(created + 60_000).toISOString();
    const none = await client.get(`/v1/approvals?dueBefore=${encodeURIComponent(early)}`);
    expect(none.body.items.map((a: any) => a.approvalId)).not.toContain(id);
    const overdue = await client.get(`/v1/approvals?overdue=true`);
    expect(overdue.body.items.map((a: any) => a.approvalId)).not.toContain(id);

    // Lena (leads) may not see it until the escalation adds her group.
    expect((await client.get(`/v1/approvals/${id}`, { key: LENA })).status).toBe(404);
    const escalated = await until(async () => hooks(id, "approval.escalated")[0], 30_000);
    expect(signed(escalated)).toBe(true);
    expect(escalated.approval.escalatedTo).toEqual(["leads"]);
    // Webhooks link to the approval's own console page.
    expect(JSON.parse(escalated.body).link).toBe(`/console/approvals/${id}`);
    const reminders = hooks(id, "approval.reminder");
    expect(reminders).toHaveLength(2);
    expect(reminders.every(signed)).toBe(true);
    // On time: not before it was due (the webhook is sent after the commit).
    expect(Number(/t=(\d+)/.exec(reminders[0]!.signature)![1]) * 1000).toBeGreaterThanOrEqual(
      Math.floor((created + 1000) / 1000) * 1000,
    );

    const leads = await client.get("/v1/approvals?status=PENDING&approver=leads", { key: LENA });
    expect(leads.body.items.map((a: any) => a.approvalId)).toContain(id);
    const seen = await client.get(`/v1/approvals/${id}`, { key: LENA });
    expect(seen.status).toBe(200);
    const yes = await client.post(
      `/v1/approvals/${id}/decisions`,
      { decision: "APPROVE", envelopeHash: seen.body.envelopeHash },
      { key: LENA },
    );
    expect(yes.status).toBe(200);
    await client.until(async () => {
      const r = await client.get(path(executionId));
      return r.body.status === "SUCCEEDED" ? true : undefined;
    }, 30_000);
    const types = await historyTypes(executionId);
    expect(types.filter((t) => t === "ApprovalReminded")).toHaveLength(2);
    expect(types.filter((t) => t === "ApprovalEscalated")).toHaveLength(1);
    await stopWorker(worker);
  }, 120_000);

  it("timers due while no worker runs fire once each after a SIGKILL and a restart", async () => {
    const first = await startWorker();
    const { executionId, approval } = await start({
      reminders: [{ AfterSeconds: 2 }, { AfterSeconds: 2.5 }],
      escalation: { AfterSeconds: 3, To: ["leads"] },
    });
    const id = approval.approvalId as string;
    first.child.kill("SIGKILL");
    await exited(first.child);
    const created = Date.parse(approval.createdAt);
    // Every timer is due while no worker runs.
    await until(async () => (Date.now() > created + 3500 ? true : undefined), 30_000);
    expect(hooks(id, "approval.escalated")).toHaveLength(0);

    const second = await startWorker();
    await until(async () => hooks(id, "approval.escalated")[0], 60_000);
    await stopWorker(second);
    // Another restart repeats nothing: the approval is decided after it, and each
    // reminder and the escalation are in the history and the webhooks once.
    await startWorker();
    const record = (await client.get(`/v1/approvals/${id}`)).body;
    expect(record.escalatedTo).toEqual(["leads"]);
    const yes = await client.post(
      `/v1/approvals/${id}/decisions`,
      { decision: "APPROVE", envelopeHash: record.envelopeHash },
      { key: ALICE },
    );
    expect(yes.status).toBe(200);
    await until(async () => hooks(id, "approval.decided")[0], 30_000);
    await client.until(async () => {
      const r = await client.get(path(executionId));
      return r.body.status === "SUCCEEDED" ? true : undefined;
    }, 30_000);
    const types = await historyTypes(executionId);
    expect(types.filter((t) => t === "ApprovalReminded")).toHaveLength(2);
    expect(types.filter((t) => t === "ApprovalEscalated")).toHaveLength(1);
    expect(hooks(id, "approval.reminder")).toHaveLength(2);
    expect(hooks(id, "approval.escalated")).toHaveLength(1);
  }, 120_000);
});
