import { describe, expect, it } from "vitest";
import { validateDefinition } from "../../schema/index.js";

/** Static checks of approval tasks: what would fail with States.Runtime, found before it runs. */
function approval(task: object, language?: "JSONata") {
  return {
    ...(language ? { QueryLanguage: language } : {}),
    StartAt: "Ask",
    States: { Ask: { Type: "Task", Resource: "stepwise:approval", End: true, ...task } },
  };
}

function codes(definition: object): { code: string; path: string; message: string }[] {
  return validateDefinition(definition).diagnostics.filter(
    (d) => d.code === "INVALID_APPROVAL_FIELD",
  );
}

describe("INVALID_APPROVAL_FIELD", () => {
  it.each<[string, object, string, RegExp]>([
    ["no Parameters", {}, "/States/Ask/Resource", /Parameters with at least 'Subject'/],
    [
      "no Subject",
      { Parameters: { Details: 1 } },
      "/States/Ask/Parameters",
      /'Subject' is required/,
    ],
    [
      "empty Subject",
      { Parameters: { Subject: "" } },
      "/States/Ask/Parameters/Subject",
      /non-empty/,
    ],
    [
      "unknown field",
      { Parameters: { Subject: "x", "Amount.$": "$.a" } },
      "/States/Ask/Parameters/Amount.$",
      /'Amount' is not an approval field/,
    ],
    [
      "RequiredApprovals 0",
      { Parameters: { Subject: "x", RequiredApprovals: 0 } },
      "/States/Ask/Parameters/RequiredApprovals",
      /at least 1/,
    ],
    [
      "Approvers not groups",
      { Parameters: { Subject: "x", Approvers: ["fin ance"] } },
      "/States/Ask/Parameters/Approvers",
      /group names/,
    ],
    [
      "both expiries",
      { Parameters: { Subject: "x", ExpiresInSeconds: 5, "ExpiresAt.$": "$.t" } },
      "/States/Ask/Parameters",
      /not both/,
    ],
    [
      "bad ExpiresAt",
      { Parameters: { Subject: "x", ExpiresAt: "soon" } },
      "/States/Ask/Parameters/ExpiresAt",
      /RFC 3339/,
    ],
  ])("%s", (_, task, path, message) => {
    const found = codes(approval(task));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatchObject({ path });
    expect(found[0]!.message).toMatch(message);
    expect(validateDefinition(approval(task)).valid).toBe(false);
  });

  it("accepts dynamic values and JSONata expressions, and checks JSONata's Arguments", () => {
    expect(
      codes(approval({ Parameters: { "Subject.$": "$.s", "RequiredApprovals.$": "$.n" } })),
    ).toEqual([]);
    expect(
      codes(
        approval(
          { Arguments: { Subject: "{% $states.input.s %}", RequiredApprovals: 2 } },
          "JSONata",
        ),
      ),
    ).toEqual([]);
    expect(codes(approval({ Arguments: "{% $states.input %}" }, "JSONata"))).toEqual([]);
    expect(codes(approval({ Arguments: { Details: 1 } }, "JSONata"))[0]).toMatchObject({
      path: "/States/Ask/Arguments",
    });
  });
});
