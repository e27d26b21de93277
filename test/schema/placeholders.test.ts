import { describe, expect, it } from "vitest";
import { validateDefinition } from "../../schema/index.js";
import { fillText, quoteBarePlaceholders } from "../../schema/placeholders.js";

/** A SAM template's definition: placeholders in a number, an ARN and a transition. */
const YAML = `StartAt: W
States:
  W:
    Type: Wait
    Seconds: \${WaitSeconds}
    Next: T
  T:
    Type: Task
    Resource: \${WorkerArn}
    Next: \${AfterWork}
  Done:
    Type: Succeed
`;
const ARN = "arn:aws:lambda:us-east-1:123456789012:function:work";

describe("${Name} placeholders (SAM DefinitionSubstitutions)", () => {
  it("fills them textually before parsing: a YAML number stays a number", () => {
    const result = validateDefinition(YAML, {
      substitutions: { WaitSeconds: "5", WorkerArn: ARN, AfterWork: "Done" },
    });
    expect(result.diagnostics).toEqual([]);
    expect(result.definition?.States["W"]).toMatchObject({ Seconds: 5 });
    expect(result.definition?.States["T"]).toMatchObject({ Resource: ARN, Next: "Done" });
  });

  it("warns once per unfilled placeholder and skips the checks that need its value", () => {
    const result = validateDefinition(YAML);
    expect(result.valid).toBe(true);
    expect(result.diagnostics.map((d) => [d.code, d.severity, d.path, d.line])).toEqual([
      ["UNRESOLVED_PLACEHOLDER", "warning", "/States/W/Seconds", 5],
      ["UNRESOLVED_PLACEHOLDER", "warning", "/States/T/Resource", 9],
      ["UNRESOLVED_PLACEHOLDER", "warning", "/States/T/Next", 10],
    ]);
    expect(result.diagnostics[0]!.message).toContain("${WaitSeconds}");
  });

  it("still reports the mistakes that do not depend on a placeholder", () => {
    const result = validateDefinition(YAML.replace("Type: Wait", "Type: Wiat"), {
      substitutions: { WaitSeconds: "5", WorkerArn: ARN, AfterWork: "Done" },
    });
    expect(result.valid).toBe(false);
    expect(result.diagnostics.map((d) => d.code)).toContain("SCHEMA_VALIDATION_FAILED");
  });

  it("reads JSON text with a placeholder outside a string (filled or not)", () => {
    const json = `{"StartAt": "W", "States": {"W": {"Type": "Wait", "Seconds": \${Wait}, "End": true}}}`;
    const filled = validateDefinition(json, { substitutions: { Wait: "3" } });
    expect(filled.diagnostics).toEqual([]);
    expect(filled.definition?.States["W"]).toMatchObject({ Seconds: 3 });
    const open = validateDefinition(json);
    expect(open.valid).toBe(true);
    expect(open.diagnostics).toMatchObject([
      { code: "UNRESOLVED_PLACEHOLDER", path: "/States/W/Seconds" },
    ]);
  });

  it("fills the strings of a definition sent as an object", () => {
    const result = validateDefinition(
      {
        StartAt: "T",
        States: { T: { Type: "Task", Resource: "${Fn}", End: true } },
      },
      { substitutions: { Fn: ARN } },
    );
    expect(result.diagnostics).toEqual([]);
    expect(result.definition?.States["T"]).toMatchObject({ Resource: ARN });
  });

  it("leaves text without the names given alone, and quotes only bare placeholders", () => {
    expect(fillText("a ${X} ${Y} $${Z} ${!Lit}", { X: "1" })).toBe("a 1 ${Y} $${Z} ${!Lit}");
    expect(quoteBarePlaceholders('{"a": ${A}, "b": "${B}", "c": "\\"${C}"}')).toBe(
      '{"a": "${A}", "b": "${B}", "c": "\\"${C}"}',
    );
  });
});
