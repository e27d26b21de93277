import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KEYS, startStack, type Stack } from "./stack.js";

/**
 * Bulk stop, pause, resume and purge as background operations on real Redis with
 * a real worker: progress at /v1/operations/:id, the counts, and what each
 * execution ends up as.
 */
let stack: Stack;
const enc = encodeURIComponent;

beforeAll(async () => {
  stack = await startStack();
  for (const [name, seconds] of [
    ["sleepy", 3600],
    ["napper", 1],
    ["dozy", 3600],
    ["drowsy", 3600],
  ] as const) {
    await stack.client.post("/v1/state-machines", {
      name,
      definition: { StartAt: "W", States: { W: { Type: "Wait", Seconds: seconds, End: true } } },
    });
  }
});

afterAll(async () => {
  await stack?.close();
});

async function startMany(machine: string, count: number): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - i) }, () =>
        stack.client.post(`/v1/state-machines/${machine}/executions`, {}),
      ),
    );
    ids.push(...batch.map((r) => r.body.executionId as string));
  }
  return ids;
}

async function finished(operationId: string): Promise<any> {
  return stack.client.until(async () => {
    const op = (await stack.client.get(`/v1/operations/${operationId}`)).body;
    return op.status !== "RUNNING" ? op : undefined;
  }, 60_000);
}

async function countOf(query: string): Promise<number> {
  let total = 0;
  let cursor: string | undefined;
  do {
    const page = await stack.client.get(
      `/v1/executions?${query}&limit=1000${cursor ? `&cursor=${enc(cursor)}` : ""}`,
    );
    total += page.body.items.length;
    cursor = page.body.nextCursor;
  } while (cursor);
  return total;
}

async function lastEventId(id: string): Promise<number> {
  const page = await stack.client.get(`/v1/executions/${enc(id)}/history?reverse=true&limit=1`);
  return page.body.items[0].id as number;
}

describe("bulk operations", () => {
  it("stops 1,000 running executions and reports the operation complete", async () => {
    const ids = await startMany("sleepy", 1000);
    await stack.client.until(async () =>
      (await countOf("stateMachine=sleepy&status=RUNNING")) === 1000 ? true : undefined,
    );
    const started = await stack.client.post(
      "/v1/executions/stop",
      { stateMachine: "sleepy", cause: "incident 7" },
      { key: KEYS.run },
    );
    expect(started.status).toBe(202);
    expect(started.headers.get("location")).toBe(`/v1/operations/${started.body.operationId}`);
    expect(started.body).toMatchObject({
      action: "stop",
      status: "RUNNING",
      filter: { stateMachine: "sleepy", status: "RUNNING" },
      createdBy: "runner",
    });
    const op = await finished(started.body.operationId);
    expect(op).toMatchObject({ status: "SUCCEEDED", matched: 1000, done: 1000, failed: 0 });
    expect(await countOf("stateMachine=sleepy&status=ABORTED")).toBe(1000);
    expect(await countOf("stateMachine=sleepy&status=RUNNING")).toBe(0);

    // Nothing of them moves afterwards.
    const sample = ids.filter((_, i) => i % 100 === 0);
    const before = await Promise.all(sample.map(lastEventId));
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    expect(await Promise.all(sample.map(lastEventId))).toEqual(before);
    const history = (await stack.client.get(`/v1/executions/${enc(ids[0]!)}/history`)).body.items;
    expect(history.at(-1)).toMatchObject({
      type: "ExecutionAborted",
      executionAbortedEventDetails: { cause: "incident 7", callerName: "runner" },
    });

    // Again: nothing left to stop, and that is no error.
    const again = await finished(
      (
        await stack.client.post("/v1/executions/stop", {
          stateMachine: "sleepy",
          status: "RUNNING",
        })
      ).body.operationId,
    );
    expect(again).toMatchObject({ status: "SUCCEEDED", matched: 0, done: 0 });
  });

  it("pauses and resumes a state machine's executions", async () => {
    const ids = await startMany("napper", 20);
    const paused = await finished(
      (
        await stack.client.post("/v1/executions/pause", {
          stateMachine: "napper",
          reason: "deploy",
        })
      ).body.operationId,
    );
    expect(paused.done + paused.skipped).toBe(paused.matched);
    const pausedNow = await countOf("stateMachine=napper&status=PAUSED");
    expect(pausedNow).toBeGreaterThan(0);
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    // Their Waits came due meanwhile and held.
    expect(await countOf("stateMachine=napper&status=PAUSED")).toBe(pausedNow);
    const resumed = await finished(
      (await stack.client.post("/v1/executions/resume", { stateMachine: "napper" })).body
        .operationId,
    );
    expect(resumed).toMatchObject({ status: "SUCCEEDED", matched: pausedNow, done: pausedNow });
    await stack.client.until(async () =>
      (await countOf("stateMachine=napper&status=SUCCEEDED")) === ids.length ? true : undefined,
    );
  });

  it("purges what ended before an instant, and is admin-only", async () => {
    const forbidden = await stack.client.post(
      "/v1/executions/purge",
      { endedBefore: new Date().toISOString() },
      { key: KEYS.run },
    );
    expect(forbidden.status).toBe(403);
    const cutoff = new Date().toISOString();
    const purge = await finished(
      (
        await stack.client.post("/v1/executions/purge", {
          stateMachine: "napper",
          endedBefore: cutoff,
        })
      ).body.operationId,
    );
    expect(purge).toMatchObject({ status: "SUCCEEDED", matched: 20, done: 20, failed: 0 });
    expect(await countOf("stateMachine=napper")).toBe(0);
    // The stopped sleepers were not in the filter.
    expect(await countOf("stateMachine=sleepy")).toBe(1000);
  });

  it("answers bad requests and unknown operations from the registry", async () => {
    // No filter at all would act on every execution there is: refused, the fix named.
    const missing = await stack.client.post("/v1/executions/stop", {});
    expect(missing.status).toBe(400);
    expect(missing.body.message).toContain("give at least one filter (stateMachine");
    expect(missing.body.message).toContain('"status": "RUNNING"');
    // In a stop, `error` is the error it records, not a filter: no filter given.
    expect((await stack.client.post("/v1/executions/stop", { error: "Ops.X" })).status).toBe(400);
    // An execution that runs has no error to match: pause takes no `error`.
    expect(
      (await stack.client.post("/v1/executions/pause", { namePrefix: "x", error: "E" })).status,
    ).toBe(400);
    const wrongStatus = await stack.client.post("/v1/executions/resume", {
      stateMachine: "napper",
      status: "RUNNING",
    });
    expect(wrongStatus.status).toBe(400);
    const badInstant = await stack.client.post("/v1/executions/purge", {
      endedBefore: "yesterday",
    });
    expect(badInstant.status).toBe(400);
    expect(badInstant.body.message).toContain("'endedBefore' must be an RFC 3339 date-time");
    const unknown = await stack.client.get("/v1/operations/op_000000000000000000000000");
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toBe("OperationDoesNotExist");
  });

  it("stops what a filtered listing shows, across state machines, and nothing else", async () => {
    const start = async (machine: string, name: string) => {
      const r = await stack.client.post(`/v1/state-machines/${machine}/executions`, { name });
      expect(r.status, JSON.stringify(r.body)).toBe(201);
      return r.body.executionId as string;
    };
    // In the filter: inc-7-* of two state machines, started before the cut-off.
    const hit = await Promise.all(
      [0, 1, 2].flatMap((i) => [start("dozy", `inc-7-d${i}`), start("drowsy", `inc-7-w${i}`)]),
    );
    // Out of it: another prefix, and the same prefix started after the cut-off.
    const otherName = await Promise.all([start("dozy", "inc-8-d0"), start("drowsy", "inc-70")]);
    const cutoff = new Date(Date.now() + 1);
    await stack.client.until(async () => (Date.now() > cutoff.getTime() ? true : undefined));
    const late = await start("dozy", "inc-7-late");
    const query = `namePrefix=inc-7-&status=RUNNING&startedBefore=${enc(cutoff.toISOString())}`;
    // The listing shows exactly the six: that is what the operation is to act on.
    expect(await countOf(query)).toBe(6);

    const started = await stack.client.post(
      "/v1/executions/stop",
      { namePrefix: "inc-7-", startedBefore: cutoff.toISOString(), cause: "incident 8" },
      { key: KEYS.run },
    );
    expect(started.status, JSON.stringify(started.body)).toBe(202);
    expect(started.body.filter).toEqual({
      namePrefix: "inc-7-",
      startedBefore: cutoff.toISOString(),
      status: "RUNNING",
    });
    const op = await finished(started.body.operationId);
    expect(op).toMatchObject({ status: "SUCCEEDED", matched: 6, done: 6, skipped: 0, failed: 0 });
    const statusOf = async (id: string) =>
      (await stack.client.get(`/v1/executions/${enc(id)}`)).body.status as string;
    expect(await Promise.all(hit.map(statusOf))).toEqual(Array(6).fill("ABORTED"));
    expect(await Promise.all([...otherName, late].map(statusOf))).toEqual(Array(3).fill("RUNNING"));
    expect(await countOf(query)).toBe(0);

    // A start-time window from the other side, with pause and resume: only the late one.
    const after = { namePrefix: "inc-7-", startedAfter: cutoff.toISOString() };
    const paused = await finished(
      (await stack.client.post("/v1/executions/pause", after)).body.operationId,
    );
    expect(paused).toMatchObject({ status: "SUCCEEDED", matched: 1, done: 1 });
    expect(await statusOf(late)).toBe("PAUSED");
    expect(await Promise.all(otherName.map(statusOf))).toEqual(["RUNNING", "RUNNING"]);
    const resumed = await finished(
      (await stack.client.post("/v1/executions/resume", after)).body.operationId,
    );
    expect(resumed).toMatchObject({ status: "SUCCEEDED", matched: 1, done: 1 });
    expect(await statusOf(late)).toBe("RUNNING");

    // Purge by error name: the aborted ones carry none, so only failures of that name go.
    const failed = await stack.client.post("/v1/state-machines", {
      name: "brittle",
      definition: { StartAt: "F", States: { F: { Type: "Fail", Error: "Orders.Gone" } } },
    });
    expect(failed.status).toBe(201);
    for (const name of ["inc-7-f0", "inc-7-f1"]) {
      const r = await stack.client.post("/v1/state-machines/brittle/executions?wait=10", { name });
      expect(r.body.status).toBe("FAILED");
    }
    const purge = await finished(
      (
        await stack.client.post("/v1/executions/purge", {
          namePrefix: "inc-7-",
          error: "Orders.Gone",
          endedBefore: new Date(Date.now() + 1000).toISOString(),
        })
      ).body.operationId,
    );
    expect(purge).toMatchObject({ status: "SUCCEEDED", matched: 2, done: 2 });
    expect(await countOf("namePrefix=inc-7-f")).toBe(0);
    expect(await countOf("namePrefix=inc-7-&status=ABORTED")).toBe(6);
  });
});
