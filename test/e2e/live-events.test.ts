import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openStream, type SseEvent } from "./sse.js";
import { API_KEYS, KEYS, startStack, type Stack } from "./stack.js";

/**
 * The live routes over a real socket on real Redis: the history stream
 * (`/v1/executions/:id/events`), the approval stream (`/v1/approvals/events`),
 * `/v1/me`, and the console's static serving.
 */
const APPROVER = "alice-secret-0123456789abcdef";
let stack: Stack;
let consoleDir: string;

const enc = encodeURIComponent;

beforeAll(async () => {
  consoleDir = mkdtempSync(join(tmpdir(), "stepwise-console-"));
  mkdirSync(join(consoleDir, "assets"));
  writeFileSync(join(consoleDir, "index.html"), "<!doctype html><title>Stepwise console</title>");
  writeFileSync(join(consoleDir, "assets", "app-3f9a0c1d2e.js"), "console.log('app')");
  stack = await startStack({
    apiKeys: `${API_KEYS},alice:approve:${APPROVER}`,
    approverGroups: "alice=finance",
    consoleDir,
  });
  await stack.client.post("/v1/state-machines", {
    name: "slow",
    definition: {
      StartAt: "First",
      States: {
        First: { Type: "Pass", Next: "Nap" },
        Nap: { Type: "Wait", Seconds: 1, Next: "Last" },
        Last: { Type: "Pass", Result: { done: true }, End: true },
      },
    },
  });
  await stack.client.post("/v1/state-machines", {
    name: "ask",
    definition: {
      StartAt: "Ask",
      States: {
        Ask: {
          Type: "Task",
          Resource: "arn:aws:states:::stepwise:approval",
          Parameters: { Subject: "Ship it?", "Details.$": "$", Approvers: ["finance"] },
          End: true,
        },
      },
    },
  });
});

afterAll(async () => {
  await stack?.close();
  if (consoleDir) rmSync(consoleDir, { recursive: true, force: true });
});

async function collect(
  stream: Awaited<ReturnType<typeof openStream>>,
  until: (event: SseEvent) => boolean,
): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for (;;) {
    const event = await stream.next();
    if (!event) return events;
    events.push(event);
    if (until(event)) return events;
  }
}

describe("GET /v1/executions/:id/events", () => {
  it("streams the history as it is committed, then the end, then closes", async () => {
    const started = await stack.client.post("/v1/state-machines/slow/executions", { input: {} });
    const id = started.body.executionId as string;
    const stream = await openStream(`${stack.url}/v1/executions/${enc(id)}/events`, {
      key: KEYS.run,
    });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("cache-control")).toContain("no-cache");
    const events = await collect(stream, () => false);
    const history = events.filter((e) => e.event === "history");
    expect(history[0]!.data.type).toBe("ExecutionStarted");
    expect(history.map((e) => Number(e.id))).toEqual(history.map((_, i) => i + 1));
    expect(history.map((e) => e.data.id)).toEqual(history.map((e) => Number(e.id)));
    expect(history.at(-1)!.data.type).toBe("ExecutionSucceeded");
    expect(events.at(-1)).toEqual({ event: "end", data: { status: "SUCCEEDED" } });
    // The stream's events are the history's, whole.
    const page = await stack.client.get(`/v1/executions/${enc(id)}/history?limit=1000`);
    expect(history.map((e) => e.data)).toEqual(page.body.items);
  });

  it("delivers events committed after the stream opened (live, not a replay)", async () => {
    const started = await stack.client.post("/v1/state-machines/slow/executions", { input: {} });
    const id = started.body.executionId as string;
    const stream = await openStream(`${stack.url}/v1/executions/${enc(id)}/events`, {
      key: KEYS.admin,
    });
    const first = await collect(stream, (e) => e.data?.type === "WaitStateEntered");
    const waitedAt = Date.now();
    const rest = await collect(stream, (e) => e.event === "end");
    // The Wait had not ended when its entry arrived: the exit came later, over the open stream.
    expect(first.some((e) => e.data.type === "WaitStateExited")).toBe(false);
    expect(rest.some((e) => e.data.type === "WaitStateExited")).toBe(true);
    expect(Date.now() - waitedAt).toBeGreaterThan(200);
    expect(rest.at(-1)!.data.status).toBe("SUCCEEDED");
  });

  it("resumes after Last-Event-ID, and after ?after=", async () => {
    const started = await stack.client.post("/v1/state-machines/slow/executions?wait=10", {
      input: {},
    });
    const id = started.body.executionId as string;
    const total = (await stack.client.get(`/v1/executions/${enc(id)}/history`)).body.items.length;
    const url = `${stack.url}/v1/executions/${enc(id)}/events`;
    const byHeader = await collect(
      await openStream(url, { key: KEYS.run, headers: { "last-event-id": "3" } }),
      () => false,
    );
    const ids = byHeader.filter((e) => e.event === "history").map((e) => Number(e.id));
    expect(ids[0]).toBe(4);
    expect(ids.at(-1)).toBe(total);
    expect(byHeader.at(-1)!.event).toBe("end");
    const byQuery = await collect(
      await openStream(`${url}?after=${total}`, { key: KEYS.run }),
      () => false,
    );
    expect(byQuery).toEqual([{ event: "end", data: { status: "SUCCEEDED" } }]);
  });

  it("answers errors from the registry before a stream starts", async () => {
    const missing = await openStream(
      `${stack.url}/v1/executions/${enc("arn:aws:states:us-east-1:123456789012:execution:slow:nope")}/events`,
      { key: KEYS.run },
    );
    expect(missing.status).toBe(404);
    expect(missing.body.error).toBe("ExecutionDoesNotExist");
    const started = await stack.client.post("/v1/state-machines/slow/executions", { input: {} });
    const url = `${stack.url}/v1/executions/${enc(started.body.executionId)}/events`;
    expect((await openStream(url, { key: null })).status).toBe(401);
    const forbidden = await openStream(url, { key: KEYS.callback });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.error).toBe("Forbidden");
    const bad = await openStream(url, { key: KEYS.run, headers: { "last-event-id": "x1" } });
    expect(bad.status).toBe(400);
    expect(bad.body.message).toContain("Last-Event-ID");
  });
});

describe("GET /v1/approvals/events", () => {
  it("streams approval changes, and resumes after the last one seen", async () => {
    const stream = await openStream(`${stack.url}/v1/approvals/events`, { key: APPROVER });
    expect(stream.status).toBe(200);
    const started = await stack.client.post("/v1/state-machines/ask/executions", {
      input: { amount: 12 },
    });
    const created = await collect(stream, (e) => e.event === "approval");
    const change = created.at(-1)!;
    expect(change.data.event).toBe("approval.created");
    expect(change.data.approval.executionId).toBe(started.body.executionId);
    expect(change.data.approval.details).toEqual({ amount: 12 });
    // One stream position per shard (runtime/shards/shard-rooms.ts).
    expect(change.id).toMatch(/^\d+-\d+(_\d+-\d+)*$/);
    const approval = change.data.approval;
    const decided = await stack.client.post(
      `/v1/approvals/${approval.approvalId}/decisions`,
      { decision: "APPROVE", envelopeHash: approval.envelopeHash, comment: "fine" },
      { key: APPROVER },
    );
    expect(decided.status).toBe(200);
    const after = await collect(stream, (e) => e.data?.approval?.status === "APPROVED");
    expect(after.map((e) => e.data.event)).toContain("approval.decided");
    expect(after.at(-1)!.data.approval.decisions[0]).toMatchObject({
      approver: "alice",
      comment: "fine",
    });
    stream.close();

    // Resuming after the creation replays what followed it, and nothing before.
    const resumed = await openStream(`${stack.url}/v1/approvals/events`, {
      key: KEYS.admin,
      headers: { "last-event-id": change.id! },
    });
    const replay = await collect(resumed, (e) => e.data?.approval?.status === "APPROVED");
    expect(replay.map((e) => e.id)).toEqual(after.map((e) => e.id));
    resumed.close();
  });

  it("answers a HEAD with the stream's headers at once (no stream to hang on)", async () => {
    const head = await fetch(`${stack.url}/v1/approvals/events`, {
      method: "HEAD",
      headers: { authorization: `Bearer ${APPROVER}` },
      signal: AbortSignal.timeout(5_000),
    });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toContain("text/event-stream");
  });

  it("needs a key that may read approvals", async () => {
    expect((await openStream(`${stack.url}/v1/approvals/events`, { key: null })).status).toBe(401);
    expect((await openStream(`${stack.url}/v1/approvals/events`, { key: KEYS.run })).status).toBe(
      403,
    );
    const bad = await openStream(`${stack.url}/v1/approvals/events?after=yesterday`, {
      key: APPROVER,
    });
    expect(bad.status).toBe(400);
  });

  it("does not hold the server open when it closes", async () => {
    const other = await startStack();
    const stream = await openStream(`${other.url}/v1/approvals/events`, { key: KEYS.admin });
    expect(stream.status).toBe(200);
    await other.close();
    expect(await stream.next()).toBeUndefined();
  });
});

describe("GET /v1/me", () => {
  it("tells each key its name, scope, permissions and groups", async () => {
    const admin = await stack.client.get("/v1/me");
    expect(admin.body).toMatchObject({ name: "ops", scope: "admin", authenticated: true });
    expect(admin.body.permissions).toContain("approvals:decide");
    const run = await stack.client.get("/v1/me", { key: KEYS.run });
    expect(run.body.scope).toBe("run");
    expect(run.body.permissions).toContain("executions:write");
    expect(run.body.permissions).not.toContain("approvals:decide");
    const alice = await stack.client.get("/v1/me", { key: APPROVER });
    expect(alice.body).toMatchObject({ name: "alice", scope: "approve", groups: ["finance"] });
    expect(alice.body.permissions).toEqual(["identity", "approvals:read", "approvals:decide"]);
    const none = await stack.client.get("/v1/me", { key: null });
    expect(none.status).toBe(401);
  });

  it("without keys, everyone is admin and unauthenticated", async () => {
    const open = await startStack({ apiKeys: "" });
    try {
      const me = await open.client.get("/v1/me");
      expect(me.status).toBe(200);
      expect(me.body).toMatchObject({ name: null, scope: "admin", authenticated: false });
    } finally {
      await open.close();
    }
  });
});

describe("/console/", () => {
  it("serves the app, its assets, and the app shell for its pages", async () => {
    const redirect = await fetch(`${stack.url}/console`, { redirect: "manual" });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.get("location")).toBe("/console/");
    const index = await fetch(`${stack.url}/console/`);
    expect(index.status).toBe(200);
    expect(await index.text()).toContain("Stepwise console");
    expect(index.headers.get("cache-control")).toBe("no-cache");
    const asset = await fetch(`${stack.url}/console/assets/app-3f9a0c1d2e.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    const page = await fetch(`${stack.url}/console/executions/some-id`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("Stepwise console");
    const missing = await fetch(`${stack.url}/console/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect(((await missing.json()) as { error: string }).error).toBe("RouteNotFound");
  });
});
