import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyAudit } from "../../runtime/audit/verify.js";
import type { Client } from "./client.js";
import { startCrashRig, type CrashRig } from "./crash-rig.js";
import { exited } from "./processes.js";

/**
 * A wide inline Map whose iterations a worker holds past its room (issue 43: the runs
 * its commits wake stay in its process, leases renewed, instead of becoming queue
 * jobs; its execution's commits go out pipelined, commit/commit-locks.ts; its
 * parent takes its children's ends by the batch, commit/plan.ts "queued"). A worker
 * SIGKILLed mid-Map, with thousands of iterations held and commits in flight, loses
 * nothing: another worker takes them when their leases run out. Two workers on one
 * Map at once finish it too. Either way each iteration ran once, the history's ids
 * are 1..N without a gap and its hash chain verifies.
 * API: `stepwise serve --no-worker`; workers: `stepwise worker`, through bin/stepwise.js.
 */
let rig: CrashRig;
let client: Client;

beforeAll(async () => {
  rig = await startCrashRig("map-overflow-crash", { STEPWISE_MAX_HISTORY_EVENTS: "0" });
  client = rig.client;
  const definition = {
    StartAt: "Fan",
    States: {
      Fan: {
        Type: "Map",
        ItemProcessor: {
          StartAt: "One",
          States: { One: { Type: "Pass", Parameters: { "i.$": "$" }, End: true } },
        },
        End: true,
      },
    },
  };
  expect((await client.post("/v1/state-machines", { name: "fan", definition })).status).toBe(201);
}, 60_000);

afterAll(async () => {
  await rig?.close();
});

const ITEMS = 3000;

async function history(
  id: string,
): Promise<{ id: number; previousEventId?: number; type: string }[]> {
  const events: { id: number; previousEventId?: number; type: string }[] = [];
  let cursor: string | undefined;
  do {
    const page = await client.get(
      `/v1/executions/${id}/history?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    expect(page.status, page.text).toBe(200);
    events.push(...(page.body.items as { id: number; type: string }[]));
    cursor = page.body.nextCursor ?? undefined;
  } while (cursor);
  return events;
}

async function checkDone(id: string): Promise<void> {
  const done = await client.until(async () => {
    const record = await client.get(`/v1/executions/${id}`);
    return record.body.status !== "RUNNING" ? record.body : undefined;
  }, 120_000);
  expect(done.status, JSON.stringify(done).slice(0, 500)).toBe("SUCCEEDED");
  expect(done.output).toEqual(Array.from({ length: ITEMS }, (_, i) => ({ i })));
  const events = await history(id);
  expect(events.map((e) => e.id)).toEqual(events.map((_, i) => i + 1));
  const count = (type: string) => events.filter((e) => e.type === type).length;
  expect(count("MapIterationStarted")).toBe(ITEMS);
  expect(count("MapIterationSucceeded")).toBe(ITEMS);
  expect(count("ExecutionSucceeded")).toBe(1);
  // The export is JSON lines: read as text.
  const audit = await fetch(`${client.baseUrl}/v1/executions/${id}/audit`, {
    headers: { authorization: `Bearer ${client.defaultKey}` },
  });
  expect(audit.status).toBe(200);
  expect(verifyAudit(await audit.text())).toMatchObject({
    ok: true,
    head: { eventId: events.length },
  });
}

async function start(name: string): Promise<string> {
  const input = Array.from({ length: ITEMS }, (_, i) => i);
  const started = await client.post("/v1/state-machines/fan/executions", { name, input });
  expect(started.status, started.text).toBe(201);
  return encodeURIComponent(started.body.executionId as string);
}

describe("a wide inline Map held past a worker's room", () => {
  it("loses nothing when its worker is SIGKILLed mid-Map", async () => {
    const id = await start("crashed");
    // Dies after 600 iterations committed, thousands more held and commits in flight.
    const first = rig.worker({ at: "afterCommit:child", after: 600 });
    await exited(first.child, 90_000);
    expect(first.child.signalCode).toBe("SIGKILL");
    const second = rig.worker();
    try {
      await checkDone(id);
    } finally {
      second.child.kill("SIGTERM");
      await exited(second.child, 30_000);
    }
  }, 240_000);

  it("finishes with two workers on it at once", async () => {
    const a = rig.worker();
    const b = rig.worker();
    try {
      await checkDone(await start("two"));
    } finally {
      for (const w of [a, b]) w.child.kill("SIGTERM");
      await Promise.all([exited(a.child, 30_000), exited(b.child, 30_000)]);
    }
  }, 240_000);
});
