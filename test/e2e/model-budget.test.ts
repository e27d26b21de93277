import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startFakeServer, type FakeServer } from "./fake-server.js";
import { startStack, type Stack } from "./stack.js";

/**
 * Model budgets end to end: an execution started with `budget` accumulates what its
 * model calls spend — over Map iterations too — in the commits of their results, shows
 * it as `usage` on GET /v1/executions/:id, and the call that would go over fails with
 * Stepwise.BudgetExceeded (caught here) without a request reaching the model.
 */
let stack: Stack;
let model: FakeServer;
let configDir: string;
let definition: object;

beforeAll(async () => {
  model = await startFakeServer(() => ({
    body: {
      model: "fake-1",
      choices: [{ message: { role: "assistant", content: "ok" }, finish_reason: "stop" }],
      usage: { prompt_tokens: 100, completion_tokens: 10 },
    },
  }));
  configDir = await mkdtemp(join(tmpdir(), "stepwise-models-"));
  const config = join(configDir, "models.json");
  await writeFile(
    config,
    JSON.stringify({
      default: {
        baseUrl: `${model.url}/v1`,
        model: "fake-1",
        inputPricePerMTok: 1,
        outputPricePerMTok: 2,
      },
    }),
  );
  stack = await startStack({ env: { STEPWISE_MODEL_ENDPOINTS: config } });
  const ask = {
    Type: "Task",
    Resource: "stepwise:model",
    Arguments: { Messages: [{ role: "user", content: "{% 'item ' & $string($states.input) %}" }] },
    Output: "{% $states.result.message.content %}",
    Catch: [
      {
        ErrorEquals: ["Stepwise.BudgetExceeded"],
        Output: "{% 'over budget: ' & $parse($states.errorOutput.Cause).limit %}",
        Next: "Skipped",
      },
    ],
    End: true,
  };
  definition = {
    QueryLanguage: "JSONata",
    StartAt: "Each",
    States: {
      Each: {
        Type: "Map",
        Items: "{% $states.input.items %}",
        MaxConcurrency: 1,
        ItemProcessor: {
          StartAt: "Ask",
          States: { Ask: ask, Skipped: { Type: "Pass", End: true } },
        },
        End: true,
      },
    },
  };
  const created = await stack.client.post("/v1/state-machines", {
    name: "fan-out",
    definition,
  });
  expect(created.status).toBe(201);
});
afterAll(async () => {
  await stack?.close();
  await model?.close();
  if (configDir) await rm(configDir, { recursive: true, force: true });
});

async function finished(executionId: string): Promise<any> {
  return stack.client.until(async () => {
    const r = await stack.client.get(`/v1/executions/${encodeURIComponent(executionId)}`);
    return r.body.status === "RUNNING" ? undefined : r.body;
  }, 30_000);
}

describe("model budgets", () => {
  it("count every model call of the execution, Map iterations included", async () => {
    model.requests.length = 0;
    const started = await stack.client.post("/v1/state-machines/fan-out/executions", {
      input: { items: [1, 2, 3] },
      budget: { maxModelCalls: 10, maxCostUsd: 1 },
    });
    expect(started.status).toBe(201);
    const done = await finished(started.body.executionId);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      output: ["ok", "ok", "ok"],
      budget: { maxModelCalls: 10, maxCostUsd: 1 },
      // 3 × (100 × $1 + 10 × $2) / 1e6
      usage: { modelCalls: 3, inputTokens: 300, outputTokens: 30, costUsd: 0.00036 },
    });
    expect(model.requests).toHaveLength(3);
  });

  it("refuse the call that would go over, before it is sent, with a catchable Stepwise.BudgetExceeded", async () => {
    model.requests.length = 0;
    const started = await stack.client.post("/v1/state-machines/fan-out/executions", {
      input: { items: [1, 2, 3, 4] },
      budget: { maxInputTokens: 200 },
    });
    const done = await finished(started.body.executionId);
    expect(done).toMatchObject({
      status: "SUCCEEDED",
      output: ["ok", "ok", "over budget: maxInputTokens", "over budget: maxInputTokens"],
      usage: { modelCalls: 2, inputTokens: 200, outputTokens: 20 },
    });
    expect(model.requests).toHaveLength(2);
    const history = await stack.client.get(
      `/v1/executions/${encodeURIComponent(started.body.executionId)}/history?limit=1000`,
    );
    const failed = (history.body.items as any[])
      .filter((e) => e.type === "TaskFailed")
      .map((e) => e.taskFailedEventDetails);
    expect(failed).toHaveLength(2);
    expect(failed[0].error).toBe("Stepwise.BudgetExceeded");
    expect(JSON.parse(failed[0].cause)).toMatchObject({
      limit: "maxInputTokens",
      budget: { maxInputTokens: 200 },
      usage: { modelCalls: 2, inputTokens: 200 },
    });
  });

  it("are checked at the start: an unknown limit is a 400; without a budget, usage still shows", async () => {
    const bad = await stack.client.post("/v1/state-machines/fan-out/executions", {
      input: { items: [] },
      budget: { maxDollars: 1 },
    });
    expect(bad.status).toBe(400);
    const started = await stack.client.post("/v1/state-machines/fan-out/executions", {
      input: { items: [1] },
    });
    const done = await finished(started.body.executionId);
    expect(done.budget).toBeUndefined();
    expect(done.usage).toMatchObject({ modelCalls: 1, inputTokens: 100 });
  });

  it("of a state machine apply to its executions; a start's own limits override them field by field", async () => {
    const created = await stack.client.post("/v1/state-machines", {
      name: "capped",
      definition,
      budget: { maxModelCalls: 1, maxCostUsd: 1 },
    });
    expect(created.status).toBe(201);
    const machine = await stack.client.get("/v1/state-machines/capped");
    expect(machine.body.budget).toEqual({ maxModelCalls: 1, maxCostUsd: 1 });

    const capped = await stack.client.post("/v1/state-machines/capped/executions", {
      input: { items: [1, 2] },
    });
    expect(await finished(capped.body.executionId)).toMatchObject({
      output: ["ok", "over budget: maxModelCalls"],
      budget: { maxModelCalls: 1, maxCostUsd: 1 },
      usage: { modelCalls: 1 },
    });
    const raised = await stack.client.post("/v1/state-machines/capped/executions", {
      input: { items: [1, 2] },
      budget: { maxModelCalls: 5 },
    });
    expect(await finished(raised.body.executionId)).toMatchObject({
      output: ["ok", "ok"],
      budget: { maxModelCalls: 5, maxCostUsd: 1 },
    });
  });
});
