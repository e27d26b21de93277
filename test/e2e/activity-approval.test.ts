import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { KEYS, startStack, type Stack } from "./stack.js";

/**
 * An approval built on an activity (fixtures/activity-approval.asl.json, the
 * human-approval example before `stepwise:approval`) end to end: the execution parks on the
 * `approvals` activity; an approval UI holding only a callback-scoped key polls for
 * the task and answers its token. Approve, reject, time out, and a second answer.
 */
let stack: Stack;
const ui = { key: KEYS.callback };

beforeAll(async () => {
  stack = await startStack();
  const definition = JSON.parse(
    await readFile(
      fileURLToPath(new URL("./fixtures/activity-approval.asl.json", import.meta.url)),
      "utf8",
    ),
  );
  const created = await stack.client.post("/v1/state-machines", { name: "approval", definition });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await stack?.close();
});

const request = {
  request: { amount: 420, item: "GPU" },
  requestedBy: "ana",
  timeoutSeconds: 3600,
  heartbeatSeconds: 600,
};

async function startAndPoll(
  input: object,
): Promise<{ executionId: string; taskToken: string; taskInput: any }> {
  const { client } = stack;
  const started = await client.post("/v1/state-machines/approval/executions", { input });
  expect(started.status).toBe(201);
  const task = await client.get("/v1/activities/approvals/task?wait=10", ui);
  expect(task.status).toBe(200);
  return {
    executionId: started.body.executionId,
    taskToken: task.body.taskToken,
    taskInput: task.body.input,
  };
}

async function finished(executionId: string): Promise<any> {
  const { client } = stack;
  return client.until(async () => {
    const r = await client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.body.status === "RUNNING" ? undefined : r.body;
  });
}

describe("human approval", () => {
  it("approve: the token's answer resumes the execution to SUCCEEDED; history ids 1..N", async () => {
    const { client } = stack;
    const { executionId, taskToken, taskInput } = await startAndPoll(request);
    expect(taskInput).toMatchObject({ request: request.request, requestedBy: "ana" });
    const token = encodeURIComponent(taskToken);

    const beat = await client.post(`/v1/task-tokens/${token}/heartbeat`, undefined, ui);
    expect(beat.status).toBe(200);
    const ok = await client.post(
      `/v1/task-tokens/${token}/success`,
      { output: { approved: true, comment: "go" } },
      ui,
    );
    expect(ok.status).toBe(200);

    const done = await finished(executionId);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      output: { status: "APPROVED", request: request.request, comment: "go" },
    });

    const history = await client.get(
      `/v1/executions/${encodeURIComponent(executionId)}/history?limit=1000`,
    );
    const events = history.body.items as ({ id: number; type: string } & Record<string, any>)[];
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const types = events.map((e) => e.type);
    // An activity's history as AWS writes it: scheduled, taken by a worker (named), answered.
    for (const t of [
      "ActivityScheduled",
      "ActivityStarted",
      "ActivitySucceeded",
      "ChoiceStateEntered",
      "ExecutionSucceeded",
    ]) {
      expect(types).toContain(t);
    }
    expect(types).not.toContain("TaskScheduled");
    expect(types.indexOf("ActivityStarted")).toBeGreaterThan(types.indexOf("ActivityScheduled"));
    expect(types.indexOf("ActivityStarted")).toBeLessThan(types.indexOf("ActivitySucceeded"));
    const scheduled = events.find((e) => e.type === "ActivityScheduled")!;
    expect(scheduled.activityScheduledEventDetails).toMatchObject({
      resource: "arn:aws:states:us-east-1:123456789012:activity:approvals",
    });
    expect(JSON.parse(scheduled.activityScheduledEventDetails.input)).toMatchObject({
      requestedBy: "ana",
    });
    // The poller gave no workerName: the key's name stands for it.
    const taken = events.find((e) => e.type === "ActivityStarted")!;
    expect(taken.activityStartedEventDetails).toEqual({ workerName: "approval-ui" });
    // The approval UI's key name is recorded as the caller somewhere in the history.
    expect(JSON.stringify(history.body.items)).toContain("approval-ui");

    // A token is answered once.
    const twice = await client.post(
      `/v1/task-tokens/${token}/success`,
      { output: { approved: false } },
      ui,
    );
    expect([404, 409]).toContain(twice.status);
    expect(["TaskDoesNotExist", "TaskTimedOut"]).toContain(twice.body.error);
    const failLate = await client.post(
      `/v1/task-tokens/${token}/failure`,
      { error: "Rejected" },
      ui,
    );
    expect([404, 409]).toContain(failLate.status);
    expect(
      (await client.get(`/v1/executions/${encodeURIComponent(executionId)}`)).body.status,
    ).toBe("SUCCEEDED");
  });

  it("reject: a failure answer is caught and ends the execution FAILED with ApprovalRejected", async () => {
    const { client } = stack;
    const { executionId, taskToken } = await startAndPoll(request);
    const no = await client.post(
      `/v1/task-tokens/${encodeURIComponent(taskToken)}/failure`,
      { error: "Rejected", cause: "over budget" },
      ui,
    );
    expect(no.status).toBe(200);
    const done = await finished(executionId);
    expect(done).toMatchObject({ status: "FAILED", error: "ApprovalRejected" });
  });

  it("reject by answer: {approved: false} goes through the Choice to the same end", async () => {
    const { client } = stack;
    const { executionId, taskToken } = await startAndPoll(request);
    await client.post(
      `/v1/task-tokens/${encodeURIComponent(taskToken)}/success`,
      { output: { approved: false } },
      ui,
    );
    expect(await finished(executionId)).toMatchObject({
      status: "FAILED",
      error: "ApprovalRejected",
    });
  });

  it("timeout: nobody answers within TimeoutSeconds → escalated (ApprovalTimedOut)", async () => {
    const { client } = stack;
    const started = await client.post("/v1/state-machines/approval/executions", {
      input: { ...request, timeoutSeconds: 1, heartbeatSeconds: 60 },
    });
    const done = await finished(started.body.executionId);
    expect(done).toMatchObject({ status: "FAILED", error: "ApprovalTimedOut" });
    const history = await client.get(
      `/v1/executions/${encodeURIComponent(started.body.executionId)}/history?limit=1000`,
    );
    expect(history.body.items.map((e: { type: string }) => e.type)).toContain("ActivityTimedOut");
  });

  it("heartbeat timeout: a UI that stops sending heartbeats is timed out too", async () => {
    const { client } = stack;
    const { executionId, taskToken } = await startAndPoll({
      ...request,
      timeoutSeconds: 60,
      heartbeatSeconds: 1,
    });
    const done = await finished(executionId);
    expect(done).toMatchObject({ status: "FAILED", error: "ApprovalTimedOut" });
    const late = await client.post(
      `/v1/task-tokens/${encodeURIComponent(taskToken)}/success`,
      { output: { approved: true } },
      ui,
    );
    expect([404, 409]).toContain(late.status);
  });

  it("an activity poll with nothing to do answers 204 after the wait", async () => {
    const t0 = Date.now();
    const reply = await stack.client.get("/v1/activities/nobody-uses-this/task?wait=0.5", ui);
    expect(reply.status).toBe(204);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(400);
  });

  it("refuses tokens it never issued", async () => {
    const { client } = stack;
    const forged = await client.post(
      "/v1/task-tokens/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA/success",
      { output: {} },
      ui,
    );
    expect([400, 404]).toContain(forged.status);
    expect(["InvalidToken", "TaskDoesNotExist"]).toContain(forged.body.error);
    const malformed = await client.post("/v1/task-tokens/has%20space/success", { output: {} }, ui);
    expect(malformed.status).toBe(400);
  });
});
