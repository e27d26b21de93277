import { describe, expect, it } from "vitest";
import { validateDefinition } from "../../schema/index.js";

/** Diagnostics point at the line and column (1-based) of the offending key. */
describe("line and column of diagnostics", () => {
  it("in a YAML file", () => {
    const yaml = [
      "Comment: positions", //        1
      "StartAt: First", //             2
      "States:", //                    3
      "  First:", //                   4
      "    Type: Pass", //             5
      "    Next: Missing", //          6
      "  Lonely:", //                  7
      "    Type: Task", //             8
      "    Resource: arn:aws:lambda:us-east-1:123456789012:function:f", // 9
      "    TimeoutSeconds: 0", //      10
      "    End: true", //              11
    ].join("\n");
    const { valid, diagnostics } = validateDefinition(yaml, { format: "yaml" });
    expect(valid).toBe(false);
    const byCode = Object.fromEntries(diagnostics.map((d) => [d.code, d]));
    expect(byCode.MISSING_TRANSITION_TARGET).toMatchObject({
      path: "/States/First/Next",
      line: 6,
      column: 5,
    });
    expect(byCode.UNREACHABLE_STATE).toMatchObject({ path: "/States/Lonely", line: 7, column: 3 });
    expect(byCode.SCHEMA_VALIDATION_FAILED).toMatchObject({
      path: "/States/Lonely/TimeoutSeconds",
      line: 10,
      column: 5,
    });
    // Ordered as they appear in the file.
    expect(diagnostics.map((d) => d.line)).toEqual(
      [...diagnostics.map((d) => d.line!)].sort((a, b) => a - b),
    );
  });

  it("in JSON text", () => {
    const json = `{
  "StartAt": "A",
  "States": {
    "A": {
      "Type": "Task",
      "Resource": "arn:aws:lambda:us-east-1:123456789012:function:f",
      "Retry": [
        { "ErrorEquals": ["States.ALL"] },
        { "ErrorEquals": ["Custom"] }
      ],
      "End": true
    }
  }
}`;
    const { diagnostics } = validateDefinition(json);
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({
      code: "STATES_ALL_NOT_LAST",
      path: "/States/A/Retry/0/ErrorEquals",
      line: 8,
      column: 11,
    });
  });

  it("for a JSON syntax error", () => {
    const { diagnostics } = validateDefinition(
      '{\n  "StartAt": "A",\n  "States": {\n    "A": {"Type": "Pass" "End": true}\n  }\n}',
    );
    expect(diagnostics[0]).toMatchObject({
      code: "INVALID_JSON_DESCRIPTION",
      line: 4,
      column: 26,
      path: "/States/A/Type",
    });
  });

  it("for a duplicate key in JSON", () => {
    const { diagnostics } = validateDefinition(
      '{"StartAt": "A",\n "States": {"A": {"Type": "Pass", "End": true}},\n "StartAt": "B"}',
    );
    expect(diagnostics[0]).toMatchObject({
      code: "DUPLICATE_KEY",
      path: "/StartAt",
      line: 3,
      column: 2,
    });
    expect(diagnostics[0]!.message).toContain("first at line 1, column 2");
  });

  it("for a duplicate key in YAML", () => {
    const { diagnostics } = validateDefinition(
      "StartAt: A\nStates:\n  A:\n    Type: Pass\n    End: true\n    Type: Succeed\n",
    );
    expect(diagnostics[0]).toMatchObject({
      code: "DUPLICATE_KEY",
      path: "/States/A/Type",
      line: 6,
      column: 5,
    });
  });

  it("are absent when the definition was an object", () => {
    const { diagnostics } = validateDefinition({ StartAt: "A", States: { A: { Type: "Pass" } } });
    expect(diagnostics[0]).toMatchObject({ code: "MISSING_NEXT_OR_END", path: "/States/A" });
    expect(diagnostics[0]!.line).toBeUndefined();
  });
});
