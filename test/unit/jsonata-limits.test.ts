import { afterEach, describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { runExecution } from "../../engine/drivers/memory.js";
import { compiledExpressionCount } from "../../engine/jsonata/compile.js";
import { configureJsonataLimits, DEFAULT_JSONATA_LIMITS } from "../../engine/jsonata/limits.js";

/**
 * Hostile expressions: each must end the state quickly with a catchable
 * States.QueryEvaluationError (or States.DataLimitExceeded for oversized data),
 * never hang or exhaust the worker.
 */
const PREFIX = "An error occurred while executing the state 'S' (entered at the event id #2).";

afterEach(() => configureJsonataLimits(DEFAULT_JSONATA_LIMITS));

async function outcome(state: object, input: Json = {}) {
  const definition = {
    QueryLanguage: "JSONata",
    StartAt: "S",
    States: { S: state },
  } as unknown as StateMachineDefinition;
  const started = performance.now();
  const result = await runExecution(definition, { input });
  return {
    status: result.status,
    output: result.output,
    error: result.error,
    cause: result.cause ?? "",
    ms: performance.now() - started,
  };
}

const output = (expression: string) => ({ Type: "Pass", Output: `{% ${expression} %}`, End: true });

/**
 * Unbounded, each of these runs for minutes or until memory is gone; bounded, they end
 * in well under a second on a quiet machine. The bound asserted leaves room for the
 * suite's own load on 2 cores (5.3 s was seen with four test files at once).
 */
const FAST_MS = 10_000;

describe("hostile expressions fail fast", () => {
  it.each<[string, string, RegExp]>([
    [
      "an endless tail-recursive loop",
      "($f := function($x){ $f($x) }; $f(1))",
      /D1012: The evaluation exceeded its budget of 500000 steps/,
    ],
    ["endless recursion", "($f := function($x){ 1 + $f($x) }; $f(1))", /D1011: Stack overflow/],
    [
      "a range of a billion",
      "[1..1e9]",
      /D2014: The size of the sequence allocated by the range operator/,
    ],
    [
      "a range of ten million",
      "$count([1..10000000])",
      /D2015: The maximum sequence length of 10000000 was exceeded/,
    ],
    [
      "a huge $range",
      "$range(1, 1e9, 1)",
      /D2015: The maximum sequence length of 100000 was exceeded/,
    ],
    [
      "string doubling",
      "($f := function($s, $n){ $n = 0 ? $s : $f($s & $s, $n - 1) }; $f('x', 40))",
      /A string built during evaluation exceeded 1048576 characters/,
    ],
    [
      "a $join bomb",
      "($s := $join([1..1000].$string()); $join([1..100000].($s)))",
      /The string built by \$join would have \d+ characters; the limit is 1048576/,
    ],
    [
      "a $string bomb",
      "($s := $join([1..1000].$string()); $string([1..100000].($s)))",
      /The string built by \$string would exceed the limit/,
    ],
    [
      "a regex that reads the rest of the text for every match",
      "$replace($pad('', 20000, 'a'), /a*b|a/, 'c')",
      /D1012: The evaluation exceeded its budget of 500000 steps/,
    ],
    [
      "a quadratic reduce",
      "$reduce([1..100000], function($a, $b){ $a + $count([1..$b]) })",
      /D1012/,
    ],
    [
      "a quadratic $append",
      "$count($reduce([1..100000], function($acc, $v){ $append($acc, $v) }, []))",
      /D1012/,
    ],
    [
      "repeated big strings",
      "($s := $pad('', 1000000, 'x'); $reduce([1..100000], function($a, $b){ $a + $length($uppercase($s)) }, 0))",
      /D1012/,
    ],
    [
      "a deeply nested expression",
      `${"[".repeat(20_000)}1${"]".repeat(20_000)}`,
      /Maximum call stack size exceeded/,
    ],
  ])("%s", async (_name, expression, message) => {
    const result = await outcome(output(expression));
    expect(result.error).toBe("States.QueryEvaluationError");
    expect(result.cause).toMatch(message);
    expect(result.cause.startsWith(PREFIX)).toBe(true);
    expect(result.ms).toBeLessThan(FAST_MS);
  });

  it("can be caught like any other error, the Catch having a budget of its own", async () => {
    const definition = {
      QueryLanguage: "JSONata",
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: "arn:aws:lambda:us-east-1:123456789012:function:f",
          Arguments: "{% ($f := function(){ $f() }; $f()) %}",
          Retry: [{ ErrorEquals: ["States.QueryEvaluationError"], MaxAttempts: 1 }],
          Catch: [
            {
              ErrorEquals: ["States.QueryEvaluationError"],
              Output: "{% $states.errorOutput.Error %}",
              Next: "Done",
            },
          ],
          End: true,
        },
        Done: { Type: "Succeed" },
      },
    } as unknown as StateMachineDefinition;
    const result = await runExecution(definition, {});
    expect(result.output).toBe("States.QueryEvaluationError");
  });

  it("a result too large for a state's data is States.DataLimitExceeded, refused while it is copied", async () => {
    const result = await outcome(output("($s := $pad('', 1000, 'x'); [1..1000].($s))"));
    expect(result.error).toBe("States.DataLimitExceeded");
    expect(result.cause).toBe(
      "The state/task 'S' returned a result with a size exceeding the maximum number of bytes service limit.",
    );
    expect(result.ms).toBeLessThan(FAST_MS);
  });

  it("the step budget is shared by all the expressions of a state, across Map items", async () => {
    configureJsonataLimits({ maxSteps: 20_000 });
    const map = (items: number) => ({
      Type: "Map",
      Items: `{% [1..${items}] %}`,
      ItemSelector: { v: "{% $sum($map([1..200], function($v){ $v })) %}" },
      ItemProcessor: { StartAt: "I", States: { I: { Type: "Pass", End: true } } },
      End: true,
    });
    expect((await outcome(map(2))).status).toBe("SUCCEEDED");
    const many = await outcome(map(200));
    expect(many.cause).toMatch(
      /specified for the field 'ItemSelector\/v' threw an error during evaluation. D1012: The evaluation exceeded its budget of 20000 steps/,
    );
  });

  it("limits are configurable, and legitimate work fits the defaults", async () => {
    const sum = output("$sum($map([1..50000], function($v){ $v * 2 }))");
    expect((await outcome(sum)).output).toBe(2_500_050_000);
    configureJsonataLimits({ maxSequenceLength: 1_000 });
    expect((await outcome(sum)).cause).toMatch(
      /D2015: The maximum sequence length of 50000 was exceeded/,
    );
  });

  it("a regex with nested repetitions runs (in linear time)", async () => {
    const result = await outcome(
      output("$contains('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!', /(a+)+$/)"),
    );
    expect(result.output).toBe(false);
  });
});

describe("variable size limits (AWS: 256 KiB per variable and per Assign, 10 MiB in all)", () => {
  const big = (kib: number) => `{% $pad('', ${kib * 1024}, 'x') %}`;

  it("refuses a variable over 256 KiB", async () => {
    const result = await outcome({
      Type: "Pass",
      Assign: { small: 1, large: big(257) },
      End: true,
    });
    expect(result.error).toBe("States.DataLimitExceeded");
    expect(result.cause).toBe(
      `${PREFIX} The value assigned to the variable 'large' exceeds the maximum size of 262144 bytes.`,
    );
  });

  it("refuses one Assign over 256 KiB in all", async () => {
    const result = await outcome({ Type: "Pass", Assign: { a: big(130), b: big(130) }, End: true });
    expect(result.cause).toBe(
      `${PREFIX} The variables assigned by the state have 266244 bytes together; one Assign may have at most 262144.`,
    );
  });

  it("accepts a variable just under the limit", async () => {
    const definition = {
      QueryLanguage: "JSONata",
      StartAt: "A",
      States: {
        A: { Type: "Pass", Assign: { a: big(255) }, Output: "{% $exists($a) %}", Next: "B" },
        B: {
          Type: "Pass",
          Output: { before: "{% $states.input %}", after: "{% $length($a) %}" },
          End: true,
        },
      },
    } as unknown as StateMachineDefinition;
    const result = await runExecution(definition, {});
    expect(result.output).toEqual({ before: false, after: 255 * 1024 });
  });
});

describe("compile cache", () => {
  it("compiles an expression once and reuses it", async () => {
    const state = output("$states.input.value * 3 + 0.5");
    await outcome(state, { value: 1 });
    const count = compiledExpressionCount();
    expect((await outcome(state, { value: 2 })).output).toBe(6.5);
    expect(compiledExpressionCount()).toBe(count);
  });
});
