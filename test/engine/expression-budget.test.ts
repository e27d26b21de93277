import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { testState } from "../../engine/testing/test-state.js";
import { execute, single } from "./helpers.js";

/**
 * The inputs of the outside probe (issue 44) that stalled the process: each now
 * ends at once, in the ASL error AWS raises for an expression or a path it cannot
 * evaluate. On the old code each of these tests ran into vitest's timeout.
 */
const PREFIX = "An error occurred while executing the state 'S' (entered at the event id #2).";

function jsonata(output: string): StateMachineDefinition {
  return {
    QueryLanguage: "JSONata",
    StartAt: "S",
    States: { S: { Type: "Pass", Output: `{% ${output} %}`, End: true } },
  } as unknown as StateMachineDefinition;
}

/** `{"a": {"a": … 1}}`, `depth` levels. */
function nested(depth: number): Json {
  let value: Json = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

describe("regular expressions in JSONata (linear time)", () => {
  it("$match($pad('', 130, 'a'), /a*a*a*a*a*b/) finds nothing: the expression returns nothing", async () => {
    const r = await execute(jsonata('$match($pad("", 130, "a"), /a*a*a*a*a*b/)'));
    expect(r.error).toBe("States.QueryEvaluationError");
    expect(r.cause).toBe(
      `${PREFIX} The JSONata expression '$match($pad("", 130, "a"), /a*a*a*a*a*b/)' specified for the field 'Output' returned nothing (undefined).`,
    );
  });

  it("/^(a|a)+$/ on 26 a's", async () => {
    const r = await execute(jsonata("$match($pad('', 26, 'a'), /^(a|a)+$/)"));
    expect(r.output).toEqual({ match: "a".repeat(26), index: 0, groups: ["a"] });
    const failing = await execute(jsonata("$contains($pad('', 26, 'a') & '!', /^(a|a)+$/)"));
    expect(failing.output).toBe(false);
  });

  it("$replace($pad('', 900000, 'a'), /a*a*a*a*a*b/, 'c') answers (its result is over the data limit)", async () => {
    const r = await execute(jsonata("$replace($pad('',900000,'a'), /a*a*a*a*a*b/, 'c')"));
    expect(r.error).toBe("States.DataLimitExceeded");
    const length = await execute(
      jsonata("$length($replace($pad('',900000,'a'), /a*a*a*a*a*b/, 'c'))"),
    );
    expect(length.output).toBe(900_000);
  });

  it("a backreference fails the state with States.QueryEvaluationError naming it", async () => {
    const r = await execute(jsonata("$match('aa', /(a)\\1/)"));
    expect(r.error).toBe("States.QueryEvaluationError");
    expect(r.cause).toContain(
      "threw an error during evaluation. The regular expression /(a)\\1/ uses a backreference '\\1', which Stepwise does not support",
    );
  });

  it("a search that rereads the text for every match ends in the step budget", async () => {
    const r = await execute(jsonata("$replace($pad('', 20000, 'a'), /a*b|a/, 'c')"));
    expect(r.error).toBe("States.QueryEvaluationError");
    expect(r.cause).toMatch(/D1012: The evaluation exceeded its budget of 500000 steps/);
  });
});

describe("JSONPath evaluation is bounded", () => {
  const inputPath = (path: string) => single({ Type: "Pass", InputPath: path, End: true });

  it("InputPath $..a..a..a on input nested 250 deep fails with States.Runtime", async () => {
    const input = nested(250);
    expect(JSON.stringify(input).length).toBeLessThan(4_600);
    const r = await execute(inputPath("$..a..a..a"), { input });
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("States.Runtime");
    expect(r.cause).toBe(
      `${PREFIX} Invalid path '$..a..a..a' : evaluating it visited more than 1000000 nodes, the most Stepwise visits for one path`,
    );
  });

  it("150 deep too; 20 deep still answers, with Jayway's duplicates", async () => {
    const deep = await execute(inputPath("$..a..a..a"), { input: nested(150) });
    expect(deep.error).toBe("States.Runtime");
    const shallow = await execute(inputPath("$..a..a..a"), { input: nested(20) });
    expect(shallow.status).toBe("SUCCEEDED");
    // Each node at depth d (d ≥ 3) is reached once per way to pick the two `..a` above it.
    expect((shallow.output as Json[]).length).toBe(1_140);
  });

  it("is terminal, as States.Runtime is on AWS: a catcher naming it does not catch it", async () => {
    const definition = {
      StartAt: "S",
      States: {
        S: {
          Type: "Task",
          Resource: "arn:aws:states:::lambda:invoke",
          InputPath: "$..a..a..a",
          Catch: [{ ErrorEquals: ["States.Runtime"], Next: "Caught" }],
          End: true,
        },
        Caught: { Type: "Pass", End: true },
      },
    } as unknown as StateMachineDefinition;
    const r = await execute(definition, { input: nested(250) });
    expect(r.status).toBe("FAILED");
    expect(r.error).toBe("States.Runtime");
  });

  it("Parameters and OutputPath paths are bounded the same way", async () => {
    const parameters = await execute(
      single({ Type: "Pass", Parameters: { "x.$": "$..a..a..a" }, End: true }),
      { input: nested(250) },
    );
    expect(parameters.error).toBe("States.Runtime");
    expect(parameters.cause).toContain("Invalid path '$..a..a..a' : evaluating it visited more");
    const output = await execute(single({ Type: "Pass", OutputPath: "$..a..a..a", End: true }), {
      input: nested(250),
    });
    expect(output.error).toBe("States.Runtime");
  });

  it("a filter's regular expression runs in linear time", async () => {
    const input = { items: [{ s: `${"a".repeat(5_000)}!` }, { s: "aaa" }] };
    const r = await execute(inputPath("$.items[?(@.s =~ /(a+)+/)].s"), { input });
    expect(r.output).toEqual(["aaa"]);
  });

  it("TestState (DEBUG) reports the failure and answers", async () => {
    const result = await testState({
      definition: { Type: "Pass", InputPath: "$..a..a..a", End: true },
      input: nested(250),
      inspectionLevel: "DEBUG",
      now: "2024-01-01T00:00:00.000Z",
      seed: "seed",
    });
    expect(result.status).toBe("FAILED");
    expect(result.error).toBe("States.Runtime");
    expect(result.inspectionData?.afterInputPath).toBeUndefined();
  });
});
