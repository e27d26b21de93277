import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { loadConfig } from "../../config/index.js";
import { startFakeServer, type FakeServer } from "../e2e/fake-server.js";
import { createMachine, exited, harness, spawnWorker } from "./helpers.js";

/**
 * Model usage is committed with the result it comes from: a worker killed with SIGKILL
 * before a commit, after it, or during the model call itself (the call then goes out
 * again, under the same Idempotency-Key) leaves each execution's usage counting every
 * answered call exactly once. The killed workers are real processes configured as in
 * production (STEPWISE_MODEL_ENDPOINTS); the worker that finishes runs in this process,
 * configured from the same file by the same configuration module. The model is a fake
 * on 127.0.0.1, one per test, so that the tests can run at once.
 */
const ITEMS = 6;
const EXECUTIONS = 4;

function messageOf(body: unknown): string {
  return (body as { messages: { content: string }[] }).messages[0]!.content;
}

const agents = {
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
};

/** Runs the executions until a worker process dies at `point`, then to their end; returns the model's requests. */
async function crashThenRecover(point: string, after: number): Promise<FakeServer["requests"]> {
  // Items answer after 20, 200 or 400 ms: when a quick one's answer lets the next call
  // start, slower ones are still at the model, so a crash then interrupts some. For a
  // crash during a call, the slowest are held until the doomed worker is gone, so that
  // some calls are surely at the model when it dies, however loaded the machine is.
  let doomedAlive = true;
  const holdSlow = point.startsWith("duringTask");
  const model = await startFakeServer((request) => ({
    delayMs:
      holdSlow && doomedAlive && Number(messageOf(request.body)) % 3 === 2
        ? 10_000
        : [20, 200, 400][Number(messageOf(request.body)) % 3],
    body: {
      choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 100, completion_tokens: 10 },
    },
  }));
  const dir = mkdtempSync(join(tmpdir(), "stepwise-model-crash-"));
  const h = await harness();
  try {
    const endpoints = join(dir, "models.json");
    writeFileSync(
      endpoints,
      JSON.stringify({
        default: { baseUrl: `${model.url}/v1`, model: "fake", inputPricePerMTok: 1 },
      }),
    );
    await createMachine(h.runtime, "agents", agents);
    const ids: string[] = [];
    for (let i = 0; i < EXECUTIONS; i++) {
      const started = await h.runtime.startExecution("agents", {
        input: { items: Array.from({ length: ITEMS }, (_, j) => i * 100 + j) },
        budget: { maxModelCalls: 1000 },
      });
      ids.push(started.executionId);
    }
    const doomed = spawnWorker(h.prefix, {
      STEPWISE_MODEL_ENDPOINTS: endpoints,
      STEPWISE_CRASH_AT: point,
      STEPWISE_CRASH_AFTER: String(after),
    });
    await exited(doomed);
    doomedAlive = false;
    expect(doomed.signalCode).toBe("SIGKILL");
    const config = loadConfig({ STEPWISE_MODEL_ENDPOINTS: endpoints });
    await h.startWorker({ modelEndpoints: config.tasks.modelEndpoints });
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
    return model.requests;
  } finally {
    await h.close();
    await model.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

describe.concurrent("model usage after a worker is killed", () => {
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
    const requests = await crashThenRecover("duringTask", 13);
    const keys = requests.map((r) => String(r.headers["idempotency-key"]));
    // Every call of every item reached the model, some twice (those the crash interrupted).
    expect(new Set(keys).size).toBe(EXECUTIONS * ITEMS);
    expect(keys.length).toBeGreaterThan(EXECUTIONS * ITEMS);
  }, 40_000);
});
