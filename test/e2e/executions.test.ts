import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startStack, type Stack } from "./stack.js";

/** Executions over HTTP: start (idempotent, ?wait=), describe, list, history paging, stop, pinning. */
let stack: Stack;
beforeAll(async () => {
  stack = await startStack();
  const { client } = stack;
  const threePasses = {
    StartAt: "A",
    States: {
      A: { Type: "Pass", Parameters: { "n.$": "$.n" }, Next: "B" },
      B: { Type: "Pass", Parameters: { "n.$": "States.MathAdd($.n, 1)" }, Next: "C" },
      C: { Type: "Pass", End: true },
    },
  };
  expect(
    (await client.post("/v1/state-machines", { name: "inc", definition: threePasses })).status,
  ).toBe(201);
  expect(
    (await client.post("/v1/state-machines", { name: "parked", definition: parked("v1") })).status,
  ).toBe(201);
});
afterAll(async () => {
  await stack?.close();
});

/** Parks on an activity until someone polls it and answers the token. */
function parked(tag: string) {
  return {
    StartAt: "Wait for worker",
    States: {
      "Wait for worker": {
        Type: "Task",
        Resource: "arn:aws:states:us-east-1:123456789012:activity:e2e-parked",
        ResultPath: "$.answer",
        Next: "Tag",
      },
      Tag: { Type: "Pass", Result: tag, ResultPath: "$.tag", End: true },
    },
  };
}

describe("executions", () => {
  it("starts (201) and ?wait= answers with the output once it ends", async () => {
    const { client } = stack;
    const started = await client.post("/v1/state-machines/inc/executions?wait=10", {
      input: { n: 41 },
    });
    expect(started.status).toBe(201);
    expect(started.body).toMatchObject({ status: "SUCCEEDED", output: { n: 42 } });
    expect(started.body.executionId).toEqual(expect.any(String));

    const described = await client.get(
      `/v1/executions/${encodeURIComponent(started.body.executionId)}`,
    );
    expect(described.status).toBe(200);
    expect(described.body).toMatchObject({
      stateMachine: "inc",
      version: 1,
      status: "SUCCEEDED",
      input: { n: 41 },
      output: { n: 42 },
    });
    expect(described.body.stoppedAt).toEqual(expect.any(String));
  });

  it("without ?wait= answers at once with {executionId, startedAt}", async () => {
    const reply = await stack.client.post("/v1/state-machines/inc/executions", { input: { n: 1 } });
    expect(reply.status).toBe(201);
    expect(Object.keys(reply.body).sort()).toEqual(["executionId", "startedAt"]);
  });

  it("is idempotent by name: same input → the same execution (200); another input → 409", async () => {
    const { client } = stack;
    const first = await client.post("/v1/state-machines/inc/executions", {
      name: "once",
      input: { n: 1 },
    });
    expect(first.status).toBe(201);
    const second = await client.post("/v1/state-machines/inc/executions", {
      name: "once",
      input: { n: 1 },
    });
    expect(second.status).toBe(200);
    expect(second.body.executionId).toBe(first.body.executionId);
    const conflict = await client.post("/v1/state-machines/inc/executions", {
      name: "once",
      input: { n: 2 },
    });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error).toBe("ExecutionAlreadyExists");
  });

  it("returns history ids 1..N in order, paginated forwards and in reverse", async () => {
    const { client } = stack;
    const run = await client.post("/v1/state-machines/inc/executions?wait=10", { input: { n: 0 } });
    const id = encodeURIComponent(run.body.executionId);
    const all = await client.get(`/v1/executions/${id}/history?limit=1000`);
    expect(all.status).toBe(200);
    const events = all.body.items as { id: number; previousEventId: number; type: string }[];
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    expect(events[0]!.type).toBe("ExecutionStarted");
    expect(events.at(-1)!.type).toBe("ExecutionSucceeded");
    expect(events.filter((e) => e.type === "PassStateEntered")).toHaveLength(3);
    expect(all.body.nextCursor).toBeUndefined();

    const paged: number[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.get(
        `/v1/executions/${id}/history?limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
      );
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      paged.push(...page.body.items.map((e: { id: number }) => e.id));
      cursor = page.body.nextCursor;
    } while (cursor);
    expect(paged).toEqual(events.map((e) => e.id));

    const reversed = await client.get(`/v1/executions/${id}/history?reverse=true&limit=3`);
    expect(reversed.body.items.map((e: { id: number }) => e.id)).toEqual([
      events.length,
      events.length - 1,
      events.length - 2,
    ]);
    expect(reversed.body.nextCursor).toEqual(expect.any(String));

    const badCursor = await client.get(`/v1/executions/${id}/history?cursor=not-a-cursor`);
    expect(badCursor.status).toBe(400);
    expect(badCursor.body.error).toBe("InvalidCursor");
  });

  it("lists executions newest first, filtered by state machine and status", async () => {
    const { client } = stack;
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      const r = await client.post("/v1/state-machines/inc/executions?wait=10", { input: { n: i } });
      ids.push(r.body.executionId);
    }
    const list = await client.get("/v1/executions?stateMachine=inc&status=SUCCEEDED&limit=3");
    expect(list.status).toBe(200);
    expect(list.body.items.map((e: { executionId: string }) => e.executionId)).toEqual(
      ids.reverse(),
    );
    expect(list.body.nextCursor).toEqual(expect.any(String));
    const next = await client.get(
      `/v1/executions?stateMachine=inc&status=SUCCEEDED&limit=3&cursor=${encodeURIComponent(list.body.nextCursor)}`,
    );
    expect(next.status).toBe(200);
    for (const e of next.body.items) expect(ids).not.toContain(e.executionId);
    const none = await client.get("/v1/executions?stateMachine=inc&status=ABORTED");
    expect(none.body.items).toEqual([]);
  });

  it("keeps a running execution on its version after PUT; stops it (ABORTED), twice is 409", async () => {
    const { client } = stack;
    const started = await client.post("/v1/state-machines/parked/executions", { input: {} });
    const id = encodeURIComponent(started.body.executionId);
    expect(
      (await client.put("/v1/state-machines/parked", { definition: parked("v2") })).body.version,
    ).toBe(2);

    const onV2 = await client.post("/v1/state-machines/parked/executions?wait=0", { input: {} });
    expect(onV2.body.status).toBe("RUNNING");
    const v2 = await client.get(`/v1/executions/${encodeURIComponent(onV2.body.executionId)}`);
    expect(v2.body.version).toBe(2);

    // Answer the first execution's task: it finishes on version 1's definition.
    const task = await client.get("/v1/activities/e2e-parked/task?wait=5");
    expect(task.status).toBe(200);
    const answered = await client.post(
      `/v1/task-tokens/${encodeURIComponent(task.body.taskToken)}/success`,
      {
        output: { ok: true },
      },
    );
    expect(answered.status).toBe(200);
    const polled = async (exec: string) =>
      (await client.get(`/v1/executions/${encodeURIComponent(exec)}`)).body;
    // Which execution got the first task is the queue's business; check both by version.
    const done = await client.until(async () => {
      const [a, b] = [await polled(started.body.executionId), await polled(onV2.body.executionId)];
      return a.status !== "RUNNING" ? a : b.status !== "RUNNING" ? b : undefined;
    });
    expect(done.output.tag).toBe(done.version === 1 ? "v1" : "v2");

    const running =
      done.executionId === started.body.executionId
        ? onV2.body.executionId
        : started.body.executionId;
    const stopped = await client.post(`/v1/executions/${encodeURIComponent(running)}/stop`, {
      error: "Operator.Cancelled",
      cause: "no longer needed",
    });
    expect(stopped.status).toBe(200);
    expect(stopped.body).toMatchObject({ status: "ABORTED" });
    const again = await client.post(`/v1/executions/${encodeURIComponent(running)}/stop`, {});
    expect(again.status).toBe(409);
    expect(again.body.error).toBe("ExecutionNotRunning");
    void id;
  });

  it("?wait= that runs out answers RUNNING", async () => {
    const { client } = stack;
    const t0 = Date.now();
    const reply = await client.post("/v1/state-machines/parked/executions?wait=0.3", { input: {} });
    expect(reply.status).toBe(201);
    expect(reply.body.status).toBe("RUNNING");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    await client.post(`/v1/executions/${encodeURIComponent(reply.body.executionId)}/stop`, {});
  });

  it("round-trips unicode and large-but-allowed inputs unchanged", async () => {
    const { client } = stack;
    const input = {
      text: 'Grüße, 世界 👋 \u2028 \\ "quoted"',
      lone: "\ud800",
      big: 123456789012345,
      tiny: 5e-324,
      nested: { a: [1, [2, [3, { b: null }]]] },
      blob: "x".repeat(200 * 1024),
    };
    const reply = await client.post("/v1/state-machines/inc/executions?wait=10", {
      input: { ...input, n: 1 },
    });
    expect(reply.body.status).toBe("SUCCEEDED");
    const described = await client.get(
      `/v1/executions/${encodeURIComponent(reply.body.executionId)}`,
    );
    expect(described.body.input).toEqual({ ...input, n: 1 });
  });
});
