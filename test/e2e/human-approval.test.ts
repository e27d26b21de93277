import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../cli/main.js";
import { example } from "./examples.js";
import { API_KEYS, KEYS, startStack, type Stack } from "./stack.js";

/**
 * definitions/human-approval.asl.json end to end: a payment over 10000 needs two
 * approvers from `finance`; rejection and expiry are caught. Approvers use the
 * `stepwise approvals` CLI against the listening service, as a person would.
 */
const SECRETS = {
  alice: "alice-secret-0123456789abcdef",
  bob: "bob-secret-0123456789abcdefgh",
};
let stack: Stack;

beforeAll(async () => {
  stack = await startStack({
    apiKeys: `${API_KEYS},alice:approve:${SECRETS.alice},bob:approve:${SECRETS.bob}`,
    approverGroups: "alice=finance;bob=finance",
  });
  const definition = JSON.parse(await example("human-approval.asl.json"));
  const created = await stack.client.post("/v1/state-machines", { name: "payment", definition });
  expect(created.status).toBe(201);
  expect(created.body.warnings).toBeUndefined();
});
afterAll(async () => {
  await stack?.close();
});

/** Runs `stepwise approvals …` in-process against the stack; returns exit code and output. */
async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "";
  let err = "";
  const code = await main(["approvals", ...argv, "--url", stack.url], {
    stdout: (t) => (out += t),
    stderr: (t) => (err += t),
  });
  return { code, out, err };
}

async function pendingApproval(executionId: string): Promise<string> {
  const { client } = stack;
  return client.until(async () => {
    const r = await client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.body.pendingTasks?.[0]?.approvalId as string | undefined;
  });
}

async function finished(executionId: string): Promise<any> {
  const { client } = stack;
  return client.until(async () => {
    const r = await client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.body.status === "RUNNING" ? undefined : r.body;
  });
}

async function start(input: object): Promise<string> {
  const started = await stack.client.post("/v1/state-machines/payment/executions", { input });
  expect(started.status).toBe(201);
  return started.body.executionId;
}

describe("human approval example", () => {
  it("over the threshold: two finance approvers through the CLI → PAID", async () => {
    const payment = { amount: 25000, currency: "EUR", payee: "ACME GmbH" };
    const executionId = await start({ payment });
    const id = await pendingApproval(executionId);

    const listed = await cli("list", "--status", "PENDING", "--api-key", SECRETS.alice);
    expect(listed.code).toBe(0);
    expect(listed.out).toContain(id);
    expect(listed.out).toContain("Pay 25000 EUR to ACME GmbH");

    const first = await cli("approve", id, "--api-key", SECRETS.alice, "--comment", "invoice ok");
    expect(first.code).toBe(0);
    expect(first.out).toContain("Pay 25000 EUR to ACME GmbH");
    expect(first.out).toContain('"payee": "ACME GmbH"');
    expect(first.out).toContain("approval is now PENDING");
    const twice = await cli("approve", id, "--api-key", SECRETS.alice);
    expect(twice.code).toBe(1);
    expect(twice.err).toContain("AlreadyDecided");

    const second = await cli("approve", id, "--api-key", SECRETS.bob);
    expect(second.code).toBe(0);
    expect(second.out).toContain("approval is now APPROVED");

    const done = await finished(executionId);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      output: { status: "PAID", payment, approvalId: id, approvedBy: ["alice", "bob"] },
    });
    const shown = await cli("show", id, "--json", "--api-key", SECRETS.bob);
    expect(JSON.parse(shown.out)).toMatchObject({ status: "APPROVED", requiredApprovals: 2 });
  });

  it("under the threshold one approver decides; a rejection is caught", async () => {
    const executionId = await start({ payment: { amount: 90, currency: "EUR", payee: "Bob" } });
    const id = await pendingApproval(executionId);
    const record = await stack.client.get(`/v1/approvals/${id}`, { key: SECRETS.bob });
    expect(record.body.requiredApprovals).toBe(1);
    const no = await cli("reject", id, "--api-key", SECRETS.bob, "--comment", "duplicate invoice");
    expect(no.code).toBe(0);
    const done = await finished(executionId);
    expect(done.status).toBe("SUCCEEDED");
    expect(done.output).toMatchObject({
      status: "REJECTED",
      decisions: [{ approver: "bob", decision: "REJECT", comment: "duplicate invoice" }],
    });
  });

  it("an approval nobody decides in time expires and is caught", async () => {
    const executionId = await start({
      payment: { amount: 10, currency: "EUR", payee: "Late" },
      expiresInSeconds: 1,
    });
    const done = await finished(executionId);
    expect(done).toMatchObject({ status: "FAILED", error: "ApprovalExpired" });
  });

  it("a key without the approve scope is refused by the CLI's service", async () => {
    const r = await cli("list", "--api-key", KEYS.run);
    expect(r.code).toBe(1);
    expect(r.err).toContain("Forbidden");
  });
});

describe("resources no runner serves", () => {
  const definition = {
    StartAt: "Call",
    States: {
      Call: {
        Type: "Task",
        Resource: "arn:aws:states:::ecs:runTask.waitForTaskToken",
        Parameters: { TaskDefinition: "t", "Token.$": "$$.Task.Token" },
        End: true,
      },
    },
  };

  it("are accepted with an UNSERVED_RESOURCE warning naming them", async () => {
    const validated = await stack.client.post("/v1/state-machines/validate", { definition });
    expect(validated.body.valid).toBe(true);
    const warning = validated.body.diagnostics.find((d: any) => d.code === "UNSERVED_RESOURCE");
    expect(warning).toMatchObject({ severity: "warning", path: "/States/Call/Resource" });
    expect(warning.message).toContain("arn:aws:states:::ecs:runTask.waitForTaskToken");
    const created = await stack.client.post("/v1/state-machines", { name: "unserved", definition });
    expect(created.status).toBe(201);
    expect(created.body.warnings.map((d: any) => d.code)).toEqual(["UNSERVED_RESOURCE"]);
  });

  it("approvals, activities and HTTP tasks are served", async () => {
    const served = await stack.client.post("/v1/state-machines/validate", {
      definition: {
        StartAt: "A",
        States: {
          A: { Type: "Task", Resource: "stepwise:approval", Next: "B" },
          B: { Type: "Task", Resource: "arn:aws:states:us-east-1:1:activity:x", Next: "C" },
          C: { Type: "Task", Resource: "arn:aws:states:::http:invoke", End: true },
        },
      },
    });
    expect(served.body.diagnostics.map((d: any) => d.code)).not.toContain("UNSERVED_RESOURCE");
  });
});
