import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, startStack, type Stack } from "./stack.js";

/**
 * Redrive on real Redis with a real worker: a failed execution runs again in place
 * from the state it failed in, keeps what it did before, and its history goes on.
 */
let stack: Stack;
const enc = encodeURIComponent;

beforeAll(async () => {
  stack = await startStack();
  await stack.client.post("/v1/state-machines", {
    name: "charge",
    definition: {
      QueryLanguage: "JSONata",
      StartAt: "Prepare",
      States: {
        Prepare: {
          Type: "Pass",
          Assign: { prepared: "{% $states.input.order %}" },
          Next: "Charge",
        },
        Charge: {
          Type: "Task",
          Resource: "arn:aws:states:::stepwise:waitForTaskToken",
          Arguments: { token: "{% $states.context.Task.Token %}" },
          Output: "{% {'charged': $prepared, 'by': $states.result.by} %}",
          End: true,
        },
      },
    },
  });
  await stack.client.post("/v1/state-machines", {
    name: "timed",
    definition: {
      TimeoutSeconds: 2,
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "arn:aws:states:::stepwise:waitForTaskToken",
          Parameters: { "token.$": "$$.Task.Token" },
          End: true,
        },
      },
    },
  });
  await stack.client.post("/v1/state-machines", {
    name: "nap",
    definition: {
      StartAt: "Nap",
      States: { Nap: { Type: "Wait", Seconds: 1, End: true } },
    },
  });
});

afterAll(async () => {
  await stack?.close();
});

async function record(id: string): Promise<any> {
  return (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
}

async function token(id: string): Promise<string> {
  return stack.client.until(async () => (await record(id)).pendingTasks?.[0]?.taskToken);
}

async function until(id: string, status: string): Promise<any> {
  return stack.client.until(async () => {
    const r = await record(id);
    return r.status === status ? r : undefined;
  });
}

describe("redrive", () => {
  it("runs a failed execution again from the failed state, keeping what it did", async () => {
    const id = (
      await stack.client.post("/v1/state-machines/charge/executions", { input: { order: "A-7" } })
    ).body.executionId as string;
    await stack.client.post(`/v1/task-tokens/${enc(await token(id))}/failure`, {
      error: "Card.Declined",
      cause: "insufficient funds",
    });
    const failed = await until(id, "FAILED");
    expect(failed.error).toBe("Card.Declined");

    const redriven = await stack.client.post(
      `/v1/executions/${enc(id)}/redrive`,
      { clientToken: "retry-1" },
      { key: KEYS.run },
    );
    expect(redriven.status).toBe(200);
    expect(redriven.body).toMatchObject({ status: "RUNNING", redriveCount: 1 });
    expect(redriven.body.error).toBeUndefined();
    expect(
      (await stack.client.get("/v1/executions?status=FAILED&stateMachine=charge")).body.items,
    ).toEqual([]);

    // The same client token again: the same redrive, not a second one.
    const again = await stack.client.post(`/v1/executions/${enc(id)}/redrive`, {
      clientToken: "retry-1",
    });
    expect(again.body.redriveCount).toBe(1);

    await stack.client.post(`/v1/task-tokens/${enc(await token(id))}/success`, {
      output: { by: "bank-2" },
    });
    const done = await until(id, "SUCCEEDED");
    // $prepared was assigned before the failure and is still there.
    expect(done.output).toEqual({ charged: "A-7", by: "bank-2" });
    expect(done.redriveCount).toBe(1);

    const history = (await stack.client.get(`/v1/executions/${enc(id)}/history?limit=1000`)).body
      .items as { id: number; type: string; [k: string]: any }[];
    expect(history.map((e) => e.id)).toEqual(history.map((_, i) => i + 1));
    const types = history.map((e) => e.type);
    expect(types.indexOf("ExecutionFailed")).toBeLessThan(types.indexOf("ExecutionRedriven"));
    expect(history.find((e) => e.type === "ExecutionRedriven")).toMatchObject({
      executionRedrivenEventDetails: { redriveCount: 1, callerName: "runner" },
    });
    // Prepare ran once; Charge was entered again after the redrive.
    const entered = history
      .filter((e) => e.type.endsWith("StateEntered"))
      .map((e) => e.stateEnteredEventDetails.name);
    expect(entered).toEqual(["Prepare", "Charge", "Charge"]);
    expect(types.at(-1)).toBe("ExecutionSucceeded");
    expect(
      (
        await stack.client.get("/v1/executions?status=SUCCEEDED&stateMachine=charge")
      ).body.items.map((e: { executionId: string }) => e.executionId),
    ).toContain(id);
  });

  it("redrives an aborted execution from the state it was stopped in", async () => {
    const id = (await stack.client.post("/v1/state-machines/nap/executions", {})).body
      .executionId as string;
    await stack.client.post(`/v1/executions/${enc(id)}/stop`, {});
    expect((await stack.client.post(`/v1/executions/${enc(id)}/redrive`, {})).status).toBe(200);
    const done = await until(id, "SUCCEEDED");
    expect(done.redriveCount).toBe(1);
  });

  it("gives a redriven execution its TimeoutSeconds afresh (AWS: reset to 0)", async () => {
    const id = (await stack.client.post("/v1/state-machines/timed/executions", {})).body
      .executionId as string;
    await stack.client.post(`/v1/task-tokens/${enc(await token(id))}/failure`, { error: "No" });
    await until(id, "FAILED");
    // Past the 2 s since the start: a timeout counted from the start would be due at once.
    await new Promise((r) => setTimeout(r, 2_100));
    const redriven = (await stack.client.post(`/v1/executions/${enc(id)}/redrive`, {})).body;
    await new Promise((r) => setTimeout(r, 800));
    expect((await record(id)).status).toBe("RUNNING");
    const timedOut = await until(id, "TIMED_OUT");
    expect(timedOut.error).toBe("States.Timeout");
    const after = Date.parse(timedOut.stoppedAt) - Date.parse(redriven.redrivenAt);
    expect(after).toBeGreaterThanOrEqual(1_900);
  });

  it("refuses what cannot be redriven", async () => {
    const ok = (await stack.client.post("/v1/state-machines/nap/executions?wait=10", {})).body;
    const succeeded = await stack.client.post(`/v1/executions/${enc(ok.executionId)}/redrive`, {});
    expect(succeeded.status).toBe(409);
    expect(succeeded.body.error).toBe("ExecutionNotRedrivable");
    const running = (
      await stack.client.post("/v1/state-machines/charge/executions", { input: { order: "B" } })
    ).body;
    const refused = await stack.client.post(
      `/v1/executions/${enc(running.executionId)}/redrive`,
      {},
    );
    expect(refused.body.error).toBe("ExecutionNotRedrivable");
    expect(
      (
        await stack.client.post(
          `/v1/executions/${enc(running.executionId)}/redrive`,
          {},
          { key: KEYS.callback },
        )
      ).status,
    ).toBe(403);
  });
});
