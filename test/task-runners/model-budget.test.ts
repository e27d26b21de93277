import { describe, expect, it } from "vitest";
import { exceededLimit, parseBudget, usageOfOutput } from "../../task-runners/model/budget.js";
import { budgetCheck, readUsage, usageOps } from "../../runtime/commit/usage.js";

/** Budgets' pure parts: parsing, the limit a next call would exceed, the commit's ops. */
const spent = { modelCalls: 2, inputTokens: 200, outputTokens: 20, costUsd: 0.5 };

describe("budgets", () => {
  it.each<[object, string | undefined]>([
    [{}, undefined],
    [{ maxModelCalls: 3 }, undefined],
    [{ maxModelCalls: 2 }, "maxModelCalls"],
    [{ maxInputTokens: 201 }, undefined],
    [{ maxInputTokens: 200 }, "maxInputTokens"],
    [{ maxOutputTokens: 20 }, "maxOutputTokens"],
    [{ maxCostUsd: 0.5 }, "maxCostUsd"],
    [{ maxCostUsd: 0.51, maxModelCalls: 0 }, "maxModelCalls"],
  ])("%j after %s → %s", (budget, limit) => {
    expect(exceededLimit(parseBudget(budget as never), spent)).toBe(limit);
  });

  it.each([
    [[], "must be an object"],
    [{ maxModelCalls: 1.5 }, "an integer"],
    [{ maxCostUsd: -1 }, "at least 0"],
    [{ tokens: 1 }, "unknown field 'tokens'"],
  ])("refuses %j", (value, problem) => {
    expect(() => parseBudget(value as never)).toThrow(problem);
  });

  it("meters a model task's output, and commits non-zero parts as usage ops", () => {
    const usage = usageOfOutput({
      message: { role: "assistant", content: "x", toolCalls: [] },
      usage: { inputTokens: 12, outputTokens: 0 },
      costUsd: 0.001,
    });
    expect(usage).toEqual({ modelCalls: 1, inputTokens: 12, outputTokens: 0, costUsd: 0.001 });
    expect(usageOps(usage!)).toEqual([
      { op: "usage", field: "mc", amount: "1" },
      { op: "usage", field: "mi", amount: "12" },
      { op: "usage", field: "mu", amount: "0.001" },
    ]);
    expect(usageOfOutput("text")).toBeUndefined();
  });

  it("reads totals back (cost rounded past HINCRBYFLOAT's drift) and checks them", () => {
    expect(readUsage({ mc: "3", mu: "0.00036000000000000002" })).toEqual({
      modelCalls: 3,
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0.00036,
    });
    expect(budgetCheck([null, "5", null, null, null])).toBeUndefined();
    expect(budgetCheck(['{"maxModelCalls":5}', "5", null, null, null])).toMatchObject({
      limit: "maxModelCalls",
      usage: { modelCalls: 5 },
    });
  });
});
