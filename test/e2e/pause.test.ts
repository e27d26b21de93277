import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, startStack, type Stack } from "./stack.js";

/**
 * Pause and resume on real Redis with a real worker: nothing of a paused execution
 * advances (Wait timers, task results, Map iterations, a chained Choice loop), what
 * arrives meanwhile is applied after the resume, in order, and stops and timeouts
 * still end a paused execution.
 */
let stack: Stack;
const enc = encodeURIComponent;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const machines: Record<string, object> = {
  nap: {
    StartAt: "First",
    States: {
      First: { Type: "Pass", Next: "Nap" },
      Nap: { Type: "Wait", Seconds: 1, Next: "Last" },
      Last: { Type: "Pass", Result: "done", End: true },
    },
  },
  ask: {
    StartAt: "Ask",
    States: {
      Ask: {
        Type: "Task",
        Resource: "arn:aws:states:::stepwise:waitForTaskToken",
        Parameters: { "token.$": "$$.Task.Token" },
        Next: "After",
      },
      After: { Type: "Pass", End: true },
    },
  },
  fan: {
    StartAt: "Each",
    States: {
      Each: {
        Type: "Map",
        ItemsPath: "$.items",
        ItemProcessor: {
          StartAt: "Nap",
          States: { Nap: { Type: "Wait", Seconds: 1, End: true } },
        },
        End: true,
      },
    },
  },
  loop: {
    StartAt: "Init",
    States: {
      Init: { Type: "Pass", Result: 0, ResultPath: "$.n", Next: "More" },
      More: {
        Type: "Choice",
        Choices: [{ Variable: "$.n", NumericLessThan: 3000, Next: "Add" }],
        Default: "Done",
      },
      Add: {
        Type: "Pass",
        Parameters: { "n.$": "States.MathAdd($.n, 1)" },
        Next: "More",
      },
      Done: { Type: "Succeed" },
    },
  },
  slow: {
    TimeoutSeconds: 2,
    StartAt: "Nap",
    States: { Nap: { Type: "Wait", Seconds: 60, End: true } },
  },
};

beforeAll(async () => {
  stack = await startStack();
  for (const [name, definition] of Object.entries(machines)) {
    expect((await stack.client.post("/v1/state-machines", { name, definition })).status).toBe(201);
  }
});

afterAll(async () => {
  await stack?.close();
});

async function start(machine: string, input: object = {}): Promise<string> {
  const reply = await stack.client.post(`/v1/state-machines/${machine}/executions`, { input });
  expect(reply.status).toBe(201);
  return reply.body.executionId as string;
}

async function history(id: string): Promise<{ id: number; type: string; [k: string]: any }[]> {
  return (await stack.client.get(`/v1/executions/${enc(id)}/history?limit=1000`)).body.items;
}

async function untilEvent(id: string, type: string): Promise<void> {
  await stack.client.until(async () =>
    (await history(id)).some((e) => e.type === type) ? true : undefined,
  );
}

async function untilEnded(id: string): Promise<any> {
  return stack.client.until(async () => {
    const record = (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
    return record.status !== "RUNNING" && record.status !== "PAUSED" ? record : undefined;
  }, 20_000);
}

const pause = (id: string, body: object = {}, key?: string) =>
  stack.client.post(`/v1/executions/${enc(id)}/pause`, body, key ? { key } : {});
const resume = (id: string, key?: string) =>
  stack.client.post(`/v1/executions/${enc(id)}/resume`, {}, key ? { key } : {});

describe("pause and resume", () => {
  it("holds a Wait that comes due, then resumes with the same history shape", async () => {
    const reference = await start("nap");
    await untilEnded(reference);
    const id = await start("nap");
    await untilEvent(id, "WaitStateEntered");
    const paused = await pause(id, { reason: "incident 42" }, KEYS.run);
    expect(paused.status).toBe(200);
    expect(paused.body.status).toBe("PAUSED");
    expect(paused.body.pause).toMatchObject({ reason: "incident 42", by: "runner" });

    const listed = await stack.client.get("/v1/executions?status=PAUSED&stateMachine=nap");
    expect(listed.body.items.map((e: { executionId: string }) => e.executionId)).toEqual([id]);
    const running = await stack.client.get("/v1/executions?status=RUNNING&stateMachine=nap");
    expect(running.body.items).toEqual([]);

    // The Wait came due a second after it was entered; 2 s later it still has not moved.
    await sleep(2_000);
    const held = await history(id);
    expect(held.map((e) => e.type)).not.toContain("WaitStateExited");
    expect(held.at(-1)).toMatchObject({
      type: "ExecutionPaused",
      executionPausedEventDetails: { reason: "incident 42", callerName: "runner" },
    });
    expect((await stack.client.get(`/v1/executions/${enc(id)}`)).body.status).toBe("PAUSED");

    const resumed = await resume(id);
    expect(resumed.status).toBe(200);
    expect(resumed.body.status).toBe("RUNNING");
    expect(resumed.body.pause).toBeUndefined();
    const ended = await untilEnded(id);
    expect(ended.status).toBe("SUCCEEDED");
    expect(ended.output).toBe("done");
    const events = await history(id);
    expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
    const shape = events
      .map((e) => e.type)
      .filter((t) => t !== "ExecutionPaused" && t !== "ExecutionResumed");
    expect(shape).toEqual((await history(reference)).map((e) => e.type));
    expect(events.find((e) => e.type === "ExecutionResumed")).toMatchObject({
      executionResumedEventDetails: { callerName: "ops" },
    });
  });

  it("accepts a task result while paused and applies it after the resume", async () => {
    const id = await start("ask");
    const token = await stack.client.until(async () => {
      const record = (await stack.client.get(`/v1/executions/${enc(id)}`)).body;
      return record.pendingTasks?.[0]?.taskToken as string | undefined;
    });
    expect((await pause(id)).status).toBe(200);
    const answered = await stack.client.post(`/v1/task-tokens/${enc(token)}/success`, {
      output: { approved: true },
    });
    expect(answered.status).toBe(200);
    await sleep(1_000);
    expect((await history(id)).map((e) => e.type)).not.toContain("TaskSucceeded");
    expect((await stack.client.get(`/v1/executions/${enc(id)}`)).body.status).toBe("PAUSED");
    await resume(id);
    const ended = await untilEnded(id);
    expect(ended.status).toBe("SUCCEEDED");
    expect(ended.output).toEqual({ approved: true });
  });

  it("holds every Map iteration", async () => {
    const id = await start("fan", { items: [1, 2, 3, 4, 5] });
    await stack.client.until(async () =>
      (await history(id)).filter((e) => e.type === "WaitStateEntered").length === 5
        ? true
        : undefined,
    );
    await pause(id);
    await sleep(2_000);
    const held = await history(id);
    expect(held.map((e) => e.type)).not.toContain("MapIterationSucceeded");
    await resume(id);
    const ended = await untilEnded(id);
    expect(ended.status).toBe("SUCCEEDED");
    expect(ended.output).toEqual([1, 2, 3, 4, 5]);
    const types = (await history(id)).map((e) => e.type);
    expect(types.filter((t) => t === "MapIterationSucceeded")).toHaveLength(5);
  });

  it("stops a busy loop mid-chain: the history does not grow while paused", async () => {
    const id = await start("loop");
    await stack.client.until(async () => ((await history(id)).length > 50 ? true : undefined));
    await pause(id);
    // In-flight transitions settle (a chained job meets the pause at its next commit).
    await sleep(300);
    const before = (
      await stack.client.get(`/v1/executions/${enc(id)}/history?reverse=true&limit=1`)
    ).body.items[0].id as number;
    await sleep(1_000);
    const after = (await stack.client.get(`/v1/executions/${enc(id)}/history?reverse=true&limit=1`))
      .body.items[0].id as number;
    expect(after).toBe(before);
    await resume(id);
    const ended = await untilEnded(id);
    expect(ended.status).toBe("SUCCEEDED");
    expect(ended.output).toEqual({ n: 3000 });
  });

  it("a paused execution can be stopped, and still times out", async () => {
    const stopped = await start("nap");
    await untilEvent(stopped, "WaitStateEntered");
    await pause(stopped);
    const aborted = await stack.client.post(`/v1/executions/${enc(stopped)}/stop`, {});
    expect(aborted.status).toBe(200);
    expect(aborted.body.status).toBe("ABORTED");
    expect(aborted.body.pause).toBeUndefined();
    const listed = await stack.client.get("/v1/executions?status=PAUSED&stateMachine=nap");
    expect(listed.body.items).toEqual([]);

    const slow = await start("slow");
    await untilEvent(slow, "WaitStateEntered");
    await pause(slow);
    const ended = await untilEnded(slow);
    expect(ended.status).toBe("TIMED_OUT");
    expect((await history(slow)).at(-1)!.type).toBe("ExecutionTimedOut");
  });

  it("answers conflicts and scopes from the registry; a second pause changes nothing", async () => {
    const id = await start("ask");
    expect((await resume(id)).body.error).toBe("ExecutionNotPaused");
    const first = await pause(id, { reason: "first" });
    const second = await pause(id, { reason: "second" });
    expect(second.status).toBe(200);
    expect(second.body.pause).toEqual(first.body.pause);
    expect((await history(id)).filter((e) => e.type === "ExecutionPaused")).toHaveLength(1);
    expect((await pause(id, {}, KEYS.callback)).status).toBe(403);
    expect((await pause(id, { why: "x" })).status).toBe(400);
    await stack.client.post(`/v1/executions/${enc(id)}/stop`, {});
    const ended = await pause(id);
    expect(ended.status).toBe(409);
    expect(ended.body.error).toBe("ExecutionNotRunning");
    const missing = await pause("arn:aws:states:us-east-1:123456789012:execution:ask:nope");
    expect(missing.status).toBe(404);
  });
});
