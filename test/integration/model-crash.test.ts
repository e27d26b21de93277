import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startFakeServer, type FakeServer } from "../e2e/fake-server.js";
import { createMachine, exited, harness, spawnWorker, type Harness } from "./helpers.js";

/**
 * Model usage is committed with the result it comes from: a worker killed with SIGKILL
 * before a commit, after it, or during the model call itself (the call then goes out
 * again, under the same Idempotency-Key) leaves each execution's usage counting every
 * answered call exactly once. Workers are real processes configured as in production
 * (STEPWISE_MODEL_ENDPOINTS); the model is a fake on 127.0.0.1.
 */
const ITEMS = 6;
const EXECUTIONS = 4;

let model: FakeServer;

function messageOf(body: unknown): string {
  return (body as { messages: { content: string }[] }).messages[0]!.content;
}
let dir: string;
let h: Harness;

beforeAll(async () => {
  // Items answer after 20, 200 or 400 ms: when a quick one's answer lets the next call
  // start, slower ones are still at the model, so a crash then interrupts some.
  model = await startFakeServer((request) => ({
    delayMs: [20, 200, 400][Number(messageOf(request.body)) % 3],
    body: {
      choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 100, completion_tokens: 10 },
    },
  }));
  dir = mkdtempSync(join(tmpdir(), "stepwise-model-crash-"));
  writeFileSync(
    join(dir, "models.json"),
    JSON.stringify({
      default: { baseUrl: `${model.url}/v1`, model: "fake", inputPricePerMTok: 1 },
    }),
  );
});
afterAll(async () => {
  await model?.close();
  rmSync(dir, { recursive: true, force: true });
});
beforeEach(async () => {
  h = await harness();
  await createMachine(h.runtime, "agents", {
    QueryLanguage: "JSONata",
    StartAt: "Fan",
    States: {
      Fan: {
        Type: "Map",
        Items: "{% $states.input.items %}",
        MaxConcurrency: 3,
        ItemProcessor: {
          StartAt: "Ask",
          States: {
            Ask: {
              Type: "Task",
              Resource: "stepwise:model",
              Arguments: { Messages: [{ role: "user", content: "{% $string($states.input) %}" }] },
              Output: "{% $states.result.message.content %}",
              End: true,
            },
          },
        },
        End: true,
      },
    },
  });
});
afterEach(async () => {
  await h.close();
});

async function crashThenRecover(point: string, after: number): Promise<void> {
  model.requests.length = 0;
  const env = { STEPWISE_MODEL_ENDPOINTS: join(dir, "models.json") };
  const ids: string[] = [];
  for (let i = 0; i < EXECUTIONS; i++) {
    const started = await h.runtime.startExecution("agents", {
      input: { items: Array.from({ length: ITEMS }, (_, j) => i * 100 + j) },
      budget: { maxModelCalls: 1000 },
    });
    ids.push(started.executionId);
  }
  const doomed = spawnWorker(h.prefix, {
    ...env,
    STEPWISE_CRASH_AT: point,
    STEPWISE_CRASH_AFTER: String(after),
  });
  await exited(doomed);
  expect(doomed.signalCode).toBe("SIGKILL");
  const survivor = spawnWorker(h.prefix, env);
  try {
    for (const id of ids) {
      const record = await h.runtime.waitForExecution(id, 20_000);
      expect(record.status).toBe("SUCCEEDED");
      expect(record.output).toEqual(Array.from({ length: ITEMS }, () => "ok"));
      expect(record.usage).toEqual({
        modelCalls: ITEMS,
        inputTokens: ITEMS * 100,
        outputTokens: ITEMS * 10,
        costUsd: 0.0006, // 6 × 100 tokens at $1 per million
      });
    }
  } finally {
    survivor.kill("SIGTERM");
    await exited(survivor);
  }
}

describe("model usage after a worker is killed", () => {
  it.each([
    ["beforeCommit:child", 9],
    ["afterCommit:child", 9],
  ])(
    "at %s is counted once per answered call",
    async (point, after) => {
      await crashThenRecover(point, after);
    },
    40_000,
  );

  it("during a model call: the call goes out again under its key, and is counted once", async () => {
    // The 13th call starts after one of the first 12 (4 executions × MaxConcurrency 3) ended.
    await crashThenRecover("duringTask", 13);
    const keys = model.requests.map((r) => String(r.headers["idempotency-key"]));
    // Every call of every item reached the model, some twice (those the crash interrupted).
    expect(new Set(keys).size).toBe(EXECUTIONS * ITEMS);
    expect(keys.length).toBeGreaterThan(EXECUTIONS * ITEMS);
  }, 40_000);
});
