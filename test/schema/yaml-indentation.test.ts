import { describe, expect, it } from "vitest";
import { validateDefinition } from "../../schema/index.js";

/**
 * A YAML indentation mistake is ONE diagnostic, at the line (and column) that is
 * indented wrongly, whatever the yaml package reports on the way: it goes on after
 * the error and often reports it at the line above.
 */
const LAMBDA = "arn:aws:lambda:us-east-1:123456789012:function:f";

const ROWS: [string, string[], number, number, string][] = [
  [
    "a field one space too far",
    [
      "StartAt: A",
      "States:",
      "  A:",
      "    Type: Pass",
      "     Next: B",
      "  B:",
      "    Type: Succeed",
    ],
    5,
    6,
    "key 'Next' is indented deeper than the line above it",
  ],
  [
    "a field one space too little",
    ["StartAt: A", "States:", "  A:", "    Type: Pass", "   Next: B", "  B:", "    Type: Succeed"],
    5,
    4,
    "this line is indented 3 spaces, unlike the other keys of its mapping",
  ],
  [
    "a state one space too far",
    [
      "StartAt: A",
      "States:",
      "  A:",
      "    Type: Pass",
      "    Next: B",
      "   B:",
      "    Type: Succeed",
    ],
    6,
    4,
    "indented 3 spaces",
  ],
  [
    "a top-level field one space too far",
    ["StartAt: A", " States:", "  A:", "    Type: Pass", "    End: true"],
    2,
    2,
    "key 'States' is indented deeper",
  ],
  [
    "a Parameters field too far",
    [
      "StartAt: A",
      "States:",
      "  A:",
      "    Type: Pass",
      "    Parameters:",
      "      x: 1",
      "       y: 2",
      "    End: true",
    ],
    7,
    8,
    "key 'y' is indented deeper",
  ],
  [
    "a list item one space too far",
    [
      "StartAt: A",
      "States:",
      "  A:",
      "    Type: Task",
      `    Resource: ${LAMBDA}`,
      "    Retry:",
      "      - ErrorEquals: [States.ALL]",
      "       - ErrorEquals: [Custom]",
      "    End: true",
    ],
    8,
    8,
    "this line is indented 7 spaces, unlike the other items of its list",
  ],
  [
    "a list item one space too little",
    [
      "StartAt: A",
      "States:",
      "  A:",
      "    Type: Task",
      `    Resource: ${LAMBDA}`,
      "    Catch:",
      "      - ErrorEquals: [Custom]",
      "        Next: B",
      "     - ErrorEquals: [States.ALL]",
      "        Next: B",
      "    End: true",
      "  B:",
      "    Type: Succeed",
    ],
    9,
    6,
    "check the indentation of this line",
  ],
  [
    "a field of a list item one space too far",
    [
      "StartAt: C",
      "States:",
      "  C:",
      "    Type: Choice",
      "    Choices:",
      "      - Variable: $.x",
      "        IsPresent: true",
      "         Next: D",
      "    Default: D",
      "  D:",
      "    Type: Succeed",
    ],
    8,
    10,
    "key 'Next' is indented deeper",
  ],
  [
    "a field of a list item one space too little",
    [
      "StartAt: A",
      "States:",
      "  A:",
      "    Type: Task",
      `    Resource: ${LAMBDA}`,
      "    Catch:",
      "      - ErrorEquals: [States.ALL]",
      "       Next: B",
      "    End: true",
      "  B:",
      "    Type: Succeed",
    ],
    8,
    8,
    "check the indentation of this line",
  ],
  [
    "a tab as indentation",
    ["StartAt: A", "States:", "  A:", "\tType: Pass", "    End: true"],
    4,
    1,
    "Tabs are not allowed as indentation",
  ],
];

describe("YAML indentation errors", () => {
  it.each(ROWS)("%s: one diagnostic, at the line to fix", (_, lines, line, column, message) => {
    const { valid, diagnostics } = validateDefinition(lines.join("\n") + "\n", { format: "yaml" });
    expect(valid).toBe(false);
    expect(diagnostics, JSON.stringify(diagnostics, null, 2)).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({ code: "INVALID_YAML_DESCRIPTION", line, column });
    expect(diagnostics[0]!.message).toContain(message);
  });

  it("keeps a duplicate key that comes before the syntax error", () => {
    const { diagnostics } = validateDefinition(
      "StartAt: A\nStartAt: A\nStates:\n  A:\n    Type: Pass\n     End: true\n",
      { format: "yaml" },
    );
    expect(diagnostics.map((d) => [d.code, d.line])).toEqual([
      ["DUPLICATE_KEY", 2],
      ["INVALID_YAML_DESCRIPTION", 6],
    ]);
  });

  it("counts lines the same with CRLF line ends", () => {
    const { diagnostics } = validateDefinition(
      "StartAt: A\r\nStates:\r\n  A:\r\n    Type: Pass\r\n     End: true\r\n",
      { format: "yaml" },
    );
    expect(diagnostics).toMatchObject([{ code: "INVALID_YAML_DESCRIPTION", line: 5, column: 6 }]);
  });
});
