import { describe, expect, it } from "vitest";
import { validateDefinition } from "../../schema/index.js";
import { defaultRunners, servedBy } from "../../task-runners/index.js";

/** The model task (`stepwise:model`) is a resource the validator knows and every worker serves. */
const machine = (resource: string) => ({
  QueryLanguage: "JSONata",
  StartAt: "Plan",
  States: {
    Plan: {
      Type: "Task",
      Resource: resource,
      Arguments: { Messages: [{ role: "user", content: "hi" }] },
      Retry: [{ ErrorEquals: ["Model.RateLimited", "Model.ServerError"], MaxAttempts: 3 }],
      End: true,
    },
  },
});

describe("stepwise:model", () => {
  it.each(["arn:aws:states:::stepwise:model", "stepwise:model"])(
    "%s validates without warnings on a service with the default runners",
    (resource) => {
      const result = validateDefinition(machine(resource), { serves: servedBy(defaultRunners()) });
      expect(result.diagnostics).toEqual([]);
      expect(result.valid).toBe(true);
    },
  );

  it("a misspelt action is refused, naming the known ones", () => {
    const result = validateDefinition(machine("arn:aws:states:::stepwise:models"));
    expect(result.valid).toBe(false);
    expect(result.diagnostics[0]!.message).toContain("approval, waitForTaskToken, model");
  });
});
