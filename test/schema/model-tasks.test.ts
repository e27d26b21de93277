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

describe("INVALID_MODEL_ARGUMENT and UNKNOWN_MODEL_ERROR", () => {
  const task = (extra: object, language?: "JSONata") => ({
    ...(language ? { QueryLanguage: language } : {}),
    StartAt: "Plan",
    States: { Plan: { Type: "Task", Resource: "stepwise:model", End: true, ...extra } },
  });
  const found = (definition: object) =>
    validateDefinition(definition).diagnostics.map((d) => ({
      code: d.code,
      path: d.path,
      message: d.message,
    }));

  it.each<[string, object, string, string, RegExp]>([
    [
      "no arguments",
      task({}),
      "INVALID_MODEL_ARGUMENT",
      "/States/Plan/Resource",
      /Parameters with at least 'Messages'/,
    ],
    [
      "no Messages",
      task({ Parameters: { Model: "m" } }),
      "INVALID_MODEL_ARGUMENT",
      "/States/Plan/Parameters",
      /'Messages' is required/,
    ],
    [
      "a misspelt argument",
      task({ Parameters: { "Messages.$": "$.m", Tool: [] } }),
      "INVALID_MODEL_ARGUMENT",
      "/States/Plan/Parameters/Tool",
      /did you mean 'Tools'/,
    ],
    [
      "an Endpoint that is a URL",
      task(
        { Arguments: { Messages: "{% $m %}", Endpoint: "https://api.openai.com/v1" } },
        "JSONata",
      ),
      "INVALID_MODEL_ARGUMENT",
      "/States/Plan/Arguments/Endpoint",
      /not a URL/,
    ],
    [
      "a misspelt error",
      task({ Parameters: { "Messages.$": "$.m" }, Retry: [{ ErrorEquals: ["Model.RateLimit"] }] }),
      "UNKNOWN_MODEL_ERROR",
      "/States/Plan/Retry/0/ErrorEquals/0",
      /did you mean 'Model.RateLimited'/,
    ],
  ])("%s", (_, definition, code, path, message) => {
    const diagnostics = found(definition);
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code, path });
    expect(diagnostics[0]!.message).toMatch(message);
  });

  it("accepts dynamic arguments and the known errors", () => {
    const ok = task(
      {
        Arguments: "{% $args %}",
        Catch: [
          { ErrorEquals: ["Model.ContextLengthExceeded", "Stepwise.BudgetExceeded"], Next: "Plan" },
        ],
      },
      "JSONata",
    );
    expect(found(ok)).toEqual([]);
  });
});
