import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import type { Json } from "../../engine/core/json.js";
import { runExecution, type MemoryRunOptions } from "../../engine/drivers/memory.js";

/** JSONata states end to end on the in-memory driver: each field that takes expressions. */
const START = "2024-05-01T12:00:00.000Z";

async function run(definition: object, input: Json = {}, options: MemoryRunOptions = {}) {
  return runExecution(definition as StateMachineDefinition, {
    input,
    startTime: START,
    executionName: "exec-1",
    stateMachineName: "Machine",
    seed: "seed-1",
    ...options,
  });
}

/** One JSONata Pass state with `fields`, then End. */
function pass(fields: object): object {
  return {
    QueryLanguage: "JSONata",
    StartAt: "P",
    States: { P: { Type: "Pass", ...fields, End: true } },
  };
}

async function output(
  definition: object,
  input: Json = {},
  options: MemoryRunOptions = {},
): Promise<Json | undefined> {
  const result = await run(definition, input, options);
  expect(result.status, `${result.error}: ${result.cause}`).toBe("SUCCEEDED");
  return result.output;
}

describe("JSONata Output", () => {
  it.each<[string, object, Json, Json]>([
    ["no Output keeps the input", {}, { a: 1 }, { a: 1 }],
    ["a literal", { Output: { x: [1, "s", null, true] } }, {}, { x: [1, "s", null, true] }],
    [
      "a string that is not an expression stays a literal",
      { Output: ["$.a", "{%", "x %}", " {% 1 %}"] },
      {},
      ["$.a", "{%", "x %}", " {% 1 %}"],
    ],
    ["a whole expression", { Output: "{% $states.input.a + 1 %}" }, { a: 1 }, 2],
    [
      "nested expressions",
      {
        Output: {
          sum: "{% $sum($states.input.n) %}",
          list: ["{% 'a' & 'b' %}", { deep: "{% true %}" }],
        },
      },
      { n: [1, 2] },
      { sum: 3, list: ["ab", { deep: true }] },
    ],
    ["an expression yielding an object", { Output: "{% {'k': $states.input} %}" }, [1], { k: [1] }],
    [
      "a singleton array stays an array",
      { Output: "{% $states.input.items %}" },
      { items: [0] },
      [0],
    ],
    [
      "a sequence of one is its item",
      { Output: "{% $states.input.items[$ > 1] %}" },
      { items: [1, 2] },
      2,
    ],
    ["null", { Output: "{% null %}" }, {}, null],
    [
      "the context object",
      { Output: "{% $states.context.State.Name & ' ' & $states.context.Execution.Name %}" },
      {},
      "P exec-1",
    ],
  ])("%s", async (_name, fields, input, expected) => {
    expect(await output(pass(fields), input)).toEqual(expected);
  });

  it("Succeed takes an Output", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "S",
      States: { S: { Type: "Succeed", Output: "{% $states.input.v * 2 %}" } },
    };
    expect(await output(def, { v: 21 })).toBe(42);
  });

  it("a per-state QueryLanguage overrides the top level, and JSONPath states read JSONata output", async () => {
    const def = {
      StartAt: "A",
      States: {
        A: {
          Type: "Pass",
          QueryLanguage: "JSONata",
          Output: { v: "{% $states.input.n * 10 %}" },
          Next: "B",
        },
        B: { Type: "Pass", Parameters: { "w.$": "$.v" }, End: true },
      },
    };
    expect(await output(def, { n: 4 })).toEqual({ w: 40 });
  });
});

describe("variables (Assign)", () => {
  it("assigns after computing every value against the variables before the state", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "Init",
      States: {
        Init: { Type: "Pass", Assign: { a: 1, b: 2 }, Next: "Swap" },
        Swap: {
          Type: "Pass",
          Assign: { a: "{% $b %}", b: "{% $a %}", sum: "{% $a + $b %}" },
          Output: { a: "{% $a %}", b: "{% $b %}" },
          Next: "Read",
        },
        Read: {
          Type: "Pass",
          Output: {
            before: "{% $states.input %}",
            a: "{% $a %}",
            b: "{% $b %}",
            sum: "{% $sum %}",
          },
          End: true,
        },
      },
    };
    expect(await output(def)).toEqual({ before: { a: 1, b: 2 }, a: 2, b: 1, sum: 3 });
  });

  it("shares variables between JSONPath and JSONata states", async () => {
    const def = {
      StartAt: "J1",
      States: {
        J1: { Type: "Pass", Assign: { "fromPath.$": "$.x" }, Next: "A" },
        A: {
          Type: "Pass",
          QueryLanguage: "JSONata",
          Assign: { fromJsonata: "{% $fromPath & '!' %}" },
          Next: "J2",
        },
        J2: { Type: "Pass", Parameters: { "v.$": "$fromJsonata" }, End: true },
      },
    };
    expect(await output(def, { x: "hi" })).toEqual({ v: "hi!" });
  });

  it("a Map iteration reads outer variables and its own assignments do not leak out", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "Init",
      States: {
        Init: { Type: "Pass", Assign: { factor: 10, inner: "outer" }, Next: "M" },
        M: {
          Type: "Map",
          Items: "{% $states.input.xs %}",
          ItemProcessor: {
            StartAt: "Mul",
            States: {
              Mul: { Type: "Pass", Assign: { mine: "{% $states.input * $factor %}" }, Next: "Out" },
              Out: { Type: "Pass", Output: "{% $mine %}", End: true },
            },
          },
          Next: "After",
        },
        After: {
          Type: "Pass",
          Output: {
            results: "{% $states.input %}",
            mine: "{% $exists($mine) %}",
            inner: "{% $inner %}",
          },
          End: true,
        },
      },
    };
    expect(await output(def, { xs: [1, 2, 3] })).toEqual({
      results: [10, 20, 30],
      mine: false,
      inner: "outer",
    });
  });

  it("a Parallel branch reads outer variables", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "Init",
      States: {
        Init: { Type: "Pass", Assign: { greeting: "hello" }, Next: "P" },
        P: {
          Type: "Parallel",
          Arguments: { name: "{% $states.input.name %}" },
          Branches: [
            {
              StartAt: "B1",
              States: {
                B1: {
                  Type: "Pass",
                  Output: "{% $greeting & ' ' & $states.input.name %}",
                  End: true,
                },
              },
            },
            {
              StartAt: "B2",
              States: { B2: { Type: "Pass", Output: "{% $uppercase($greeting) %}", End: true } },
            },
          ],
          Output: { joined: "{% $join($states.result, ', ') %}" },
          Assign: { count: "{% $count($states.result) %}" },
          Next: "Done",
        },
        Done: {
          Type: "Pass",
          Output: { joined: "{% $states.input.joined %}", count: "{% $count %}" },
          End: true,
        },
      },
    };
    expect(await output(def, { name: "bob" })).toEqual({ joined: "hello bob, HELLO", count: 2 });
  });

  it("does not assign anything when the Output of the same state fails", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: "arn:aws:lambda:us-east-1:123456789012:function:f",
          Assign: { set: true },
          Output: "{% $nothing %}",
          Catch: [{ ErrorEquals: ["States.QueryEvaluationError"], Next: "C" }],
          End: true,
        },
        C: { Type: "Pass", Output: { set: "{% $exists($set) %}" }, End: true },
      },
    };
    expect(await output(def, {}, { mocks: { T: [{ Return: {} }] } })).toEqual({ set: false });
  });
});

describe("Task, Catch and Retry fields", () => {
  const lambda = "arn:aws:lambda:us-east-1:123456789012:function:f";

  it("sends Arguments, outputs the result by default, and sees $states.result in Output and Assign", async () => {
    let received: Json | undefined;
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: lambda,
          Arguments: { id: "{% $states.input.id %}", fixed: [1, "{% 1 + 1 %}"] },
          Assign: { got: "{% $states.result.value %}" },
          Next: "Default",
        },
        Default: {
          Type: "Pass",
          Output: { result: "{% $states.input %}", got: "{% $got %}" },
          End: true,
        },
      },
    };
    const result = await run(
      def,
      { id: 7 },
      {
        tasks: {
          [lambda]: (input) => {
            received = input;
            return { value: "v" };
          },
        },
      },
    );
    expect(received).toEqual({ id: 7, fixed: [1, 2] });
    expect(result.output).toEqual({ result: { value: "v" }, got: "v" });
  });

  it("evaluates TimeoutSeconds and HeartbeatSeconds expressions", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          // A service integration: its TaskScheduled carries both (a legacy Lambda ARN's
          // LambdaFunctionScheduled has no heartbeatInSeconds).
          Resource: "arn:aws:states:::lambda:invoke",
          TimeoutSeconds: "{% $states.input.t %}",
          HeartbeatSeconds: "{% $states.input.t - 1 %}",
          End: true,
        },
      },
    };
    const result = await run(def, { t: 30 }, { mocks: { T: [{ Return: 1 }] } });
    const scheduled = result.history.find((e) => e.type === "TaskScheduled") as unknown as Record<
      string,
      Record<string, Json>
    >;
    const details = Object.values(scheduled).find(
      (v) => typeof v === "object" && v !== null && "timeoutInSeconds" in v,
    );
    expect(details).toMatchObject({ timeoutInSeconds: 30, heartbeatInSeconds: 29 });
  });

  it("Catch takes Output and Assign with $states.errorOutput and $states.input", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: lambda,
          Output: "{% 'never' %}",
          Catch: [
            {
              ErrorEquals: ["States.ALL"],
              Output: { error: "{% $states.errorOutput.Error %}", input: "{% $states.input %}" },
              Assign: { cause: "{% $states.errorOutput.Cause %}" },
              Next: "After",
            },
          ],
          End: true,
        },
        After: {
          Type: "Pass",
          Output: { caught: "{% $states.input %}", cause: "{% $cause %}" },
          End: true,
        },
      },
    };
    const result = await run(
      def,
      { k: 1 },
      { mocks: { T: [{ Throw: { Error: "Boom", Cause: "it broke" } }] } },
    );
    expect(result.output).toEqual({
      caught: { error: "Boom", input: { k: 1 } },
      cause: "it broke",
    });
  });

  it("a Catch without Output passes the error output", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: lambda,
          Catch: [{ ErrorEquals: ["States.ALL"], Next: "After" }],
          End: true,
        },
        After: { Type: "Pass", End: true },
      },
    };
    const result = await run(def, {}, { mocks: { T: [{ Throw: { Error: "E", Cause: "c" } }] } });
    expect(result.output).toEqual({ Error: "E", Cause: "c" });
  });

  it("a QueryEvaluationError in Arguments is retried and caught like any error", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: lambda,
          Arguments: { x: "{% $missing %}" },
          Retry: [
            { ErrorEquals: ["States.QueryEvaluationError"], MaxAttempts: 2, IntervalSeconds: 1 },
          ],
          Catch: [
            {
              ErrorEquals: ["States.QueryEvaluationError"],
              Output: "{% $states.errorOutput.Error %}",
              Next: "After",
            },
          ],
          End: true,
        },
        After: { Type: "Pass", End: true },
      },
    };
    const result = await run(def);
    expect(result.output).toBe("States.QueryEvaluationError");
    expect(result.unusedMocks).toEqual({});
  });

  it("puts the task token into $states.context.Task.Token", async () => {
    let received: Json | undefined;
    const resource = "arn:aws:states:::sqs:sendMessage.waitForTaskToken";
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "T",
      States: {
        T: {
          Type: "Task",
          Resource: resource,
          Arguments: { token: "{% $states.context.Task.Token %}" },
          End: true,
        },
      },
    };
    await run(
      def,
      {},
      {
        nonce: () => "token-123",
        tasks: {
          [resource]: (input) => {
            received = input;
            return "ok";
          },
        },
      },
    );
    expect(received).toEqual({ token: "token-123" });
  });
});

describe("Choice", () => {
  const choice = (extra: object) => ({
    QueryLanguage: "JSONata",
    StartAt: "C",
    States: {
      C: {
        Type: "Choice",
        Choices: [
          {
            Condition: "{% $states.input.n > 10 %}",
            Next: "Big",
            Assign: { size: "big" },
            Output: { rule: "{% $states.input.n %}" },
          },
          { Condition: false, Next: "Never" },
        ],
        Default: "Small",
        Assign: { size: "small" },
        Output: { state: "{% $states.input.n %}" },
        ...extra,
      },
      Big: { Type: "Pass", Output: { out: "{% $states.input %}", size: "{% $size %}" }, End: true },
      Small: {
        Type: "Pass",
        Output: { out: "{% $states.input %}", size: "{% $size %}" },
        End: true,
      },
      Never: { Type: "Fail", Error: "Never" },
    },
  });

  it("takes the first rule whose Condition is true, with that rule's Output and Assign", async () => {
    expect(await output(choice({}), { n: 11 })).toEqual({ out: { rule: 11 }, size: "big" });
  });

  it("takes the Default with the state's Output and Assign", async () => {
    expect(await output(choice({}), { n: 1 })).toEqual({ out: { state: 1 }, size: "small" });
  });

  it("without a Default, no match is States.NoChoiceMatched", async () => {
    const result = await run(choice({ Default: undefined }), { n: 1 });
    expect(result).toMatchObject({ status: "FAILED", error: "States.NoChoiceMatched" });
  });

  it("a Condition that is not boolean fails the state", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "C",
      States: {
        C: { Type: "Choice", Choices: [{ Condition: "{% $states.input.n %}", Next: "X" }] },
        X: { Type: "Succeed" },
      },
    };
    const result = await run(def, { n: 1 });
    expect(result.error).toBe("States.QueryEvaluationError");
    expect(result.cause).toBe(
      "An error occurred while executing the state 'C' (entered at the event id #2). The JSONata expression '$states.input.n' specified for the field 'Condition' returned an unexpected result type. Expected 'boolean', but was 'number' for value: 1",
    );
  });
});

describe("Map", () => {
  it("Items (literal with expressions), ItemSelector with $states.context.Map.Item, MaxConcurrency and tolerances", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "M",
      States: {
        M: {
          Type: "Map",
          Items: ["a", "{% $states.input.second %}"],
          ItemSelector: {
            value: "{% $states.context.Map.Item.Value %}",
            index: "{% $states.context.Map.Item.Index %}",
            tag: "{% $states.input.tag %}",
          },
          MaxConcurrency: "{% $states.input.concurrency %}",
          ToleratedFailureCount: "{% 0 %}",
          ToleratedFailurePercentage: "{% 12.5 %}",
          ItemProcessor: { StartAt: "I", States: { I: { Type: "Pass", End: true } } },
          Output: { items: "{% $states.result %}" },
          End: true,
        },
      },
    };
    expect(await output(def, { second: "b", tag: "t", concurrency: 1 })).toEqual({
      items: [
        { value: "a", index: 0, tag: "t" },
        { value: "b", index: 1, tag: "t" },
      ],
    });
  });

  it("iterates the state input when there is no Items", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "M",
      States: {
        M: {
          Type: "Map",
          ItemProcessor: {
            StartAt: "I",
            States: { I: { Type: "Pass", Output: "{% $states.input * 2 %}", End: true } },
          },
          End: true,
        },
      },
    };
    expect(await output(def, [1, 2])).toEqual([2, 4]);
  });

  it("a MaxConcurrency that is not an integer fails the state", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "M",
      States: {
        M: {
          Type: "Map",
          Items: [1],
          MaxConcurrency: "{% 'x' %}",
          ItemProcessor: { StartAt: "I", States: { I: { Type: "Pass", End: true } } },
          End: true,
        },
      },
    };
    const result = await run(def);
    expect(result.cause).toBe(
      "An error occurred while executing the state 'M' (entered at the event id #2). The JSONata expression ''x'' specified for the field 'MaxConcurrency' returned an unexpected result type. Expected 'integer', but was 'string' for value: \"x\"",
    );
  });
});

describe("Wait and Fail", () => {
  it("waits Seconds given by an expression", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "W",
      States: {
        W: {
          Type: "Wait",
          Seconds: "{% $states.input.s %}",
          Output: "{% $states.input.s %}",
          End: true,
        },
      },
    };
    const result = await run(def, { s: 90 });
    expect(result.output).toBe(90);
    const exited = result.history.find((e) => e.type === "WaitStateExited")!;
    expect(Date.parse(exited.timestamp as string) - Date.parse(START)).toBe(90_000);
  });

  it("waits until a Timestamp given by an expression, and assigns", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "W",
      States: {
        W: {
          Type: "Wait",
          Timestamp: "{% $states.input.at %}",
          Assign: { waited: true },
          Next: "P",
        },
        P: { Type: "Pass", Output: "{% $waited %}", End: true },
      },
    };
    const result = await run(def, { at: "2024-05-01T12:05:00Z" });
    expect(result.output).toBe(true);
  });

  it.each<[object, string]>([
    [
      { Seconds: "{% -1 %}" },
      "The value -1 of the field 'Seconds' (from the JSONata expression '-1') is out of range: it must be between 0 and 99999999.",
    ],
    [
      { Seconds: "{% 1.5 %}" },
      "The JSONata expression '1.5' specified for the field 'Seconds' returned an unexpected result type. Expected 'integer', but was 'number' for value: 1.5",
    ],
    [
      { Timestamp: "{% 'tomorrow' %}" },
      "The Timestamp field cannot be parsed as an ISO-8601 extended offset date-time format string: tomorrow",
    ],
    [
      { Timestamp: "{% 5 %}" },
      "The JSONata expression '5' specified for the field 'Timestamp' returned an unexpected result type. Expected 'string', but was 'number' for value: 5",
    ],
  ])("refuses %j", async (fields, message) => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "W",
      States: { W: { Type: "Wait", ...fields, End: true } },
    };
    const result = await run(def);
    expect(result.error).toBe("States.QueryEvaluationError");
    expect(result.cause).toBe(
      `An error occurred while executing the state 'W' (entered at the event id #2). ${message}`,
    );
  });

  it("Fail takes Error and Cause expressions", async () => {
    const def = {
      QueryLanguage: "JSONata",
      StartAt: "F",
      States: {
        F: {
          Type: "Fail",
          Error: "{% 'E.' & $states.input.code %}",
          Cause: "{% $string($states.input) %}",
        },
      },
    };
    const result = await run(def, { code: "X" });
    expect(result).toMatchObject({ status: "FAILED", error: "E.X", cause: '{"code":"X"}' });
  });
});

describe("the functions AWS adds", () => {
  it.each<[string, Json]>([
    ["$partition([1,2,3,4,5], 2)", [[1, 2], [3, 4], [5]]],
    ["$partition([0], 3)", [[0]]],
    ["$range(0, 10, 2)", [0, 2, 4, 6, 8, 10]],
    ["$range(5, 1, -2)", [5, 3, 1]],
    ["$range(1, 9, 9)", 1],
    ["$range(3, 1, 1)", []],
    ["$hash('input data', 'MD5')", "812f45842bc6d66ee14572ce20db8e86"],
    ["$hash('input data', 'SHA-1')", "aaff4a450a104cd177d28d18d74485e8cae074b7"],
    [
      "$hash('input data', 'SHA-256')",
      "b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3",
    ],
    ["$parse('{\"a\": [1, 2]}')", { a: [1, 2] }],
    ["$parse('\"s\"')", "s"],
    ["$random(7) = $random(7)", true],
    ["$random(7) = $random(8)", false],
    // AWS: functions that need integers "automatically round down any non-integer numbers"
    [
      "$partition([1,2,3,4], 2.5)",
      [
        [1, 2],
        [3, 4],
      ],
    ],
    ["$partition([1,2,3], 1.9)", [[1], [2], [3]]],
    ["$range(0.5, 4.9, 2.7)", [0, 2, 4]],
    ["$random(7.9) = $random(7)", true],
    ["$now()", START],
    ["$millis()", Date.parse(START)],
    ["$now('[Y0001]-[M01]-[D01]')", "2024-05-01"],
  ])("%s", async (expression, expected) => {
    expect(await output(pass({ Output: `{% ${expression} %}` }))).toEqual(expected);
  });

  it("$random(), $uuid() and $shuffle() replay: the same seed gives the same values", async () => {
    const def = pass({
      Output: { r: "{% $random() %}", u: "{% $uuid() %}", s: "{% $shuffle([1,2,3,4,5,6,7,8]) %}" },
    });
    const first = await output(def);
    const second = await output(def);
    const other = await output(def, {}, { seed: "seed-2" });
    expect(first).toEqual(second);
    expect(first).not.toEqual(other);
    const value = first as { r: number; u: string; s: number[] };
    expect(value.r).toBeGreaterThanOrEqual(0);
    expect(value.r).toBeLessThan(1);
    expect(value.u).toMatch(
      /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    );
    expect([...value.s].sort()).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  });

  it("$hash reuses the States.Hash digests", async () => {
    const jsonata = await output(pass({ Output: "{% $hash('abc', 'SHA-512') %}" }));
    const intrinsic = await output({
      StartAt: "P",
      States: {
        P: {
          Type: "Pass",
          Parameters: { "h.$": "States.Hash('abc', 'SHA-512')" },
          OutputPath: "$.h",
          End: true,
        },
      },
    });
    expect(jsonata).toBe(intrinsic);
  });
});
