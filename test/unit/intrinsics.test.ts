import { describe, expect, it } from "vitest";
import { isStatesError, StatesError } from "../../engine/core/errors.js";
import type { Json } from "../../engine/core/json.js";
import { seededRandom } from "../../engine/core/random.js";
import {
  evaluateIntrinsic,
  INTRINSIC_FUNCTIONS,
  isIntrinsicCall,
  parseIntrinsic,
  validateIntrinsic,
} from "../../engine/intrinsics/index.js";
import type { PathScope } from "../../engine/jsonpath/index.js";

const scope: PathScope = {
  input: {
    str: "input data",
    num: 5,
    frac: 1.49,
    arr: [1, 2, 3, 4, 5, 6, 7, 8, 9],
    dup: [1, 2, 2, 3, 3, 4],
    obj: { a: 1, b: 2 },
    obj2: { b: 3, c: 4 },
    jsonText: '{"key":"value"}',
    nothing: null,
    template: "Hello, my name is {}.",
    name: "Arnav",
  },
  context: { Execution: { Name: "exec" }, Map: { Item: { Value: "Pikachu" } } },
  variables: { greeting: "It's {}!", n: 2 },
};

function run(text: string, random = seededRandom("intrinsics")): Json {
  return evaluateIntrinsic(text, scope, random);
}

/** The StatesError a call raises, as [error, cause]. */
function failure(text: string): [string, string] {
  try {
    run(text);
  } catch (error) {
    if (isStatesError(error)) return [error.error, error.cause];
    throw error;
  }
  throw new Error(`${text} did not fail`);
}

describe("the registry", () => {
  it("has exactly the 18 functions AWS documents", () => {
    expect([...INTRINSIC_FUNCTIONS.keys()].sort()).toStrictEqual(
      [
        "States.Format",
        "States.StringToJson",
        "States.JsonToString",
        "States.Array",
        "States.ArrayPartition",
        "States.ArrayContains",
        "States.ArrayRange",
        "States.ArrayGetItem",
        "States.ArrayLength",
        "States.ArrayUnique",
        "States.Base64Encode",
        "States.Base64Decode",
        "States.Hash",
        "States.JsonMerge",
        "States.MathRandom",
        "States.MathAdd",
        "States.StringSplit",
        "States.UUID",
      ].sort(),
    );
  });
});

describe("isIntrinsicCall", () => {
  it.each([
    ["States.Format('x')", true],
    ["States.UUID()", true],
    ["  States.Array(1) ", true],
    ["States.Nope(1)", true],
    ["$.a", false],
    ["States.Format", false],
    ["states.Format('x')", false],
    ["Format('x')", false],
  ])("%s → %s", (text, expected) => {
    expect(isIntrinsicCall(text)).toBe(expected);
  });
});

describe("parseIntrinsic", () => {
  it("parses literals, paths and nested calls", () => {
    expect(
      parseIntrinsic("States.Array('a', 1, -2.5, true, false, null, $.x, $$.y, $v, States.UUID())"),
    ).toStrictEqual({
      kind: "call",
      name: "States.Array",
      args: [
        { kind: "literal", value: "a", formatParts: ["a"] },
        { kind: "literal", value: 1 },
        { kind: "literal", value: -2.5 },
        { kind: "literal", value: true },
        { kind: "literal", value: false },
        { kind: "literal", value: null },
        { kind: "path", path: "$.x" },
        { kind: "path", path: "$$.y" },
        { kind: "path", path: "$v" },
        { kind: "call", name: "States.UUID", args: [] },
      ],
    });
  });

  it("unescapes \\' \\{ \\} \\\\ in string literals and splits at real placeholders only", () => {
    const call = parseIntrinsic("States.Format('it\\'s \\{\\} {} a\\\\b {}', 1, 2)");
    expect(call.args[0]).toStrictEqual({
      kind: "literal",
      value: "it's {} {} a\\b {}",
      formatParts: ["it's {} ", " a\\b ", ""],
    });
  });

  it("keeps commas and parentheses that belong to a path argument", () => {
    const call = parseIntrinsic("States.Array($['a,b'], $.c[?(@.d == ',')], $.e)");
    expect(call.args.map((a) => (a.kind === "path" ? a.path : "?"))).toStrictEqual([
      "$['a,b']",
      "$.c[?(@.d == ',')]",
      "$.e",
    ]);
  });
});

describe("validateIntrinsic", () => {
  const nest = (depth: number): string =>
    depth === 0 ? "'x'" : `States.Array(${nest(depth - 1)})`;

  it.each([
    "States.Format('{}', $.a)",
    "States.UUID()",
    "States.Array()",
    "States.MathRandom(1, 2)",
    "States.MathRandom(1, 2, 3)",
    "States.Format('{}.{}.{}', States.ArrayGetItem(States.StringSplit(States.ArrayGetItem(States.StringSplit($.ImageRecipe.Arn, '/'), 2), '.'), 0), States.ArrayGetItem(States.StringSplit(States.ArrayGetItem(States.StringSplit($.ImageRecipe.Arn, '/'), 2), '.'), 1))",
    nest(10),
  ])("accepts %s", (text) => {
    expect(validateIntrinsic(text)).toBeUndefined();
  });

  it.each([
    ["States.Nope(1)", "Unknown intrinsic function 'States.Nope'"],
    ["States.Hash('a')", "States.Hash takes 2 arguments, but 1 was given"],
    ["States.UUID(1)", "States.UUID takes 0 arguments"],
    ["States.Format()", "States.Format takes at least 1 argument"],
    ["States.MathRandom(1)", "States.MathRandom takes 2 to 3 arguments"],
    ["States.Array(States.Nope())", "Unknown intrinsic function 'States.Nope'"],
    ["States.Array('a'", "missing ')'"],
    ["States.Array('a)", "unterminated string literal"],
    ["States.Array('a' 'b')", "expected ',' or ')'"],
    ["States.Array(a)", "unexpected 'a'"],
    ["States.Array($.a b)", "invalid path argument"],
    ["States.Array(1) x", "after the call"],
    [nest(11), "nested at most 10 deep"],
  ])("refuses %s", (text, message) => {
    expect(validateIntrinsic(text)).toContain(message);
  });
});

describe("States.Format", () => {
  it.each<[string, Json]>([
    ["States.Format('Hello, my name is {}.', $.name)", "Hello, my name is Arnav."],
    ["States.Format($.template, $.name)", "Hello, my name is Arnav."],
    ["States.Format($greeting, $$.Map.Item.Value)", "It's Pikachu!"],
    ["States.Format('no placeholders')", "no placeholders"],
    ["States.Format('{}{}', 'a', 'b')", "ab"],
    ["States.Format('{} {} {} {}', 1, 1.1, true, null)", "1 1.1 true null"],
    ["States.Format('{}', $.obj)", "{a=1, b=2}"],
    ["States.Format('{}', $.dup)", "[1, 2, 2, 3, 3, 4]"],
    ["States.Format('literal \\{\\} and {}', 'x')", "literal {} and x"],
    ["States.Format('quote \\' backslash \\\\ {}', 'x')", "quote ' backslash \\ x"],
    ["States.Format('{}', States.Format('{}', 'nested'))", "nested"],
  ])("%s", (text, expected) => {
    expect(run(text)).toBe(expected);
  });

  it.each<[number, string]>([
    [1, "1"],
    [-7, "-7"],
    [1.1, "1.1"],
    [0.001, "0.001"],
    [1234567.5, "1234567.5"],
    [12345678.5, "1.23456785E7"],
    [0.0001, "1.0E-4"],
    [1.5e-7, "1.5E-7"],
    [1e21, "1000000000000000000000"],
  ])("prints the number %d as Java does: %s", (value, expected) => {
    const s: PathScope = { ...scope, input: { value } };
    expect(evaluateIntrinsic("States.Format('{}', $.value)", s, seededRandom("n"))).toBe(expected);
  });

  it("prints objects and arrays like Java's toString (recorded)", () => {
    const s: PathScope = {
      ...scope,
      input: { fst: { Arg1: 1, Arg2: [] }, nested: { a: { b: ["x", null] } } },
    };
    expect(evaluateIntrinsic("States.Format('fst={}', $.fst)", s, seededRandom("f"))).toBe(
      "fst={Arg1=1, Arg2=[]}",
    );
    expect(evaluateIntrinsic("States.Format('{}', $.nested)", s, seededRandom("f"))).toBe(
      "{a={b=[x, null]}}",
    );
  });

  it.each([
    [
      "States.Format('{} {}', 'a')",
      "the template has 2 placeholder(s) '{}' but 1 value(s) were given",
    ],
    [
      "States.Format('{}', 'a', 'b')",
      "the template has 1 placeholder(s) '{}' but 2 value(s) were given",
    ],
    ["States.Format(1)", "the first argument must be a string, but was number 1"],
    ["States.Format($.nothing)", "the first argument must be a string, but was null null"],
  ])("fails: %s", (text, cause) => {
    expect(failure(text)).toStrictEqual([
      "States.IntrinsicFailure",
      `Invalid arguments in States.Format: ${cause}.`,
    ]);
  });
});

describe("States.StringToJson / States.JsonToString", () => {
  it.each<[string, Json]>([
    ["States.StringToJson($.jsonText)", { key: "value" }],
    ["States.StringToJson('[1, 2, \"HelloWorld\"]')", [1, 2, "HelloWorld"]],
    ["States.StringToJson('1')", 1],
    ["States.StringToJson('true')", true],
    ["States.StringToJson('null')", null],
    ["States.StringToJson('')", null],
    ["States.StringToJson('   ')", null],
    ["States.JsonToString($.obj)", '{"a":1,"b":2}'],
    ["States.JsonToString($.dup)", "[1,2,2,3,3,4]"],
    ["States.JsonToString(1.1)", "1.1"],
    ["States.JsonToString(true)", "true"],
    ["States.JsonToString($.nothing)", "null"],
    ["States.JsonToString('text')", '"text"'],
    ["States.StringToJson(States.JsonToString($.obj))", { a: 1, b: 2 }],
  ])("%s", (text, expected) => {
    expect(run(text)).toStrictEqual(expected);
  });

  it("fails on text that is not JSON, and on a non-string", () => {
    expect(failure("States.StringToJson('{nope')")[0]).toBe("States.IntrinsicFailure");
    expect(failure("States.StringToJson('{nope')")[1]).toContain("not valid JSON");
    expect(failure("States.StringToJson($.obj)")[1]).toContain("must be a string, but was object");
  });
});

describe("array functions", () => {
  it.each<[string, Json]>([
    ["States.Array()", []],
    ["States.Array('a', 1, $.obj, States.Array())", ["a", 1, { a: 1, b: 2 }, []]],
    ["States.ArrayPartition($.arr, 4)", [[1, 2, 3, 4], [5, 6, 7, 8], [9]]],
    ["States.ArrayPartition($.arr, 9)", [[1, 2, 3, 4, 5, 6, 7, 8, 9]]],
    ["States.ArrayPartition($.arr, 20)", [[1, 2, 3, 4, 5, 6, 7, 8, 9]]],
    ["States.ArrayPartition(States.Array(), 3)", []],
    [
      "States.ArrayPartition($.arr, 2.5)",
      [
        [1, 2, 3],
        [4, 5, 6],
        [7, 8, 9],
      ],
    ],
    ["States.ArrayContains($.arr, 5)", true],
    ["States.ArrayContains($.arr, 10)", false],
    ["States.ArrayContains($.arr, '5')", false],
    ["States.ArrayContains(States.Array($.obj), $.obj)", true],
    ["States.ArrayContains(States.Array(States.Array(1, 2)), States.Array(1, 2))", true],
    ["States.ArrayContains(States.Array(), $.nothing)", false],
    ["States.ArrayRange(1, 9, 2)", [1, 3, 5, 7, 9]],
    ["States.ArrayRange(1, 10, 2)", [1, 3, 5, 7, 9]],
    ["States.ArrayRange(0, 3, 1)", [0, 1, 2, 3]],
    ["States.ArrayRange(5, 5, 1)", [5]],
    ["States.ArrayRange(5, 1, 1)", []],
    ["States.ArrayRange(5, 1, -2)", [5, 3, 1]],
    ["States.ArrayRange(0, 999, 1)", Array.from({ length: 1000 }, (_, i) => i)],
    ["States.ArrayGetItem($.arr, 5)", 6],
    ["States.ArrayGetItem($.arr.[*], 0)", 1],
    ["States.ArrayGetItem($.arr, 8)", 9],
    ["States.ArrayLength($.arr)", 9],
    ["States.ArrayLength(States.Array())", 0],
    ["States.ArrayUnique($.dup)", [1, 2, 3, 4]],
  ])("%s", (text, expected) => {
    expect(run(text)).toStrictEqual(expected);
  });

  it("ArrayUnique compares structurally and keeps first occurrences in order", () => {
    const input = {
      xs: [
        null,
        null,
        true,
        true,
        false,
        1,
        1,
        1.1,
        0,
        "a",
        "a",
        [],
        [],
        [null],
        [null],
        { a: 1, b: 2 },
        { b: 2, a: 1 },
        { a: 1, b: 1 },
      ],
    };
    expect(
      evaluateIntrinsic("States.ArrayUnique($.xs)", { ...scope, input }, seededRandom("u")),
    ).toStrictEqual([
      null,
      true,
      false,
      1,
      1.1,
      0,
      "a",
      [],
      [null],
      { a: 1, b: 2 },
      { a: 1, b: 1 },
    ]);
  });

  it.each([
    ["States.ArrayPartition($.obj, 2)", "the first argument must be an array, but was object"],
    ["States.ArrayPartition($.arr, 0)", "the chunk size must be a positive integer, but was 0"],
    ["States.ArrayPartition($.arr, -1)", "the chunk size must be a positive integer"],
    ["States.ArrayPartition($.arr, 'x')", "the second argument must be a number"],
    ["States.ArrayContains('x', 1)", "the first argument must be an array"],
    ["States.ArrayRange(1, 5, 0)", "the step must not be 0"],
    ["States.ArrayRange(0, 1000, 1)", "arrays cannot contain more than 1000 items"],
    ["States.ArrayRange('1', 5, 1)", "the first argument must be a number"],
    ["States.ArrayGetItem($.arr, 9)", "the index 9 is out of bounds for an array of length 9"],
    ["States.ArrayGetItem($.arr, -1)", "the index -1 is out of bounds"],
    ["States.ArrayGetItem($.obj, 0)", "the first argument must be an array"],
    [
      "States.ArrayLength($.str)",
      'the first argument must be an array, but was string "input data"',
    ],
    ["States.ArrayUnique($.num)", "the first argument must be an array"],
  ])("fails: %s", (text, cause) => {
    const [error, message] = failure(text);
    expect(error).toBe("States.IntrinsicFailure");
    expect(message).toContain(cause);
  });
});

describe("encoding functions", () => {
  it.each<[string, Json]>([
    ["States.Base64Encode('Data to encode')", "RGF0YSB0byBlbmNvZGU="],
    ["States.Base64Encode('Hello World')", "SGVsbG8gV29ybGQ="],
    ["States.Base64Encode('')", ""],
    ["States.Base64Encode('a')", "YQ=="],
    ["States.Base64Encode('ab')", "YWI="],
    ["States.Base64Encode('héllo €')", "aMOpbGxvIOKCrA=="],
    ["States.Base64Decode('RGF0YSB0byBlbmNvZGU=')", "Data to encode"],
    ["States.Base64Decode('YQ')", "a"],
    ["States.Base64Decode('aMOpbGxvIOKCrA==')", "héllo €"],
    ["States.Base64Decode(States.Base64Encode($.str))", "input data"],
  ])("%s", (text, expected) => {
    expect(run(text)).toBe(expected);
  });

  it.each([
    ["States.Base64Decode('not base64!')", "not valid base64"],
    ["States.Base64Decode('YQ=a')", "not valid base64"],
    ["States.Base64Decode('Y')", "not valid base64"],
    ["States.Base64Encode(1)", "must be a string"],
    ["States.Base64Decode($.obj)", "must be a string"],
  ])("fails: %s", (text, cause) => {
    const [error, message] = failure(text);
    expect(error).toBe("States.IntrinsicFailure");
    expect(message).toContain(cause);
  });

  it("limits inputs to 10,000 characters", () => {
    const long: PathScope = { ...scope, input: { s: "a".repeat(10_001), ok: "a".repeat(10_000) } };
    expect(() => evaluateIntrinsic("States.Base64Encode($.s)", long, seededRandom("x"))).toThrow(
      "the limit is 10000",
    );
    expect(() => evaluateIntrinsic("States.Base64Decode($.s)", long, seededRandom("x"))).toThrow(
      "the limit is 10000",
    );
    expect(evaluateIntrinsic("States.Base64Encode($.ok)", long, seededRandom("x"))).toHaveLength(
      13_336,
    );
  });
});

describe("States.Hash", () => {
  it.each([
    ["MD5", "812f45842bc6d66ee14572ce20db8e86"],
    ["SHA-1", "aaff4a450a104cd177d28d18d74485e8cae074b7"],
    ["SHA-256", "b4a697a057313163aee33cd8d40c66e9f0f177e00cac2de32475ffff6169c3e3"],
    [
      "SHA-384",
      "d28a7d5cf25a74f11a50a18452b75e04bb3d70c9dd0510d6123aa008c756511b87525bdc835ebb27e1fb9e9374a15562",
    ],
    [
      "SHA-512",
      "6ce4adb348546d4f449c4d25aad9a7c9cb711d9e91982d3f0b29ca2f3f47d4ce2deba23bf2954f0f1d593fc50283731a533d30d425402d4f91316d871303aac4",
    ],
  ])("%s of 'input data' (recorded)", (algorithm, expected) => {
    expect(run(`States.Hash($.str, '${algorithm}')`)).toBe(expected);
  });

  // FIPS 180 / RFC 1321 vectors: the empty string, "abc", and a message that spans blocks.
  it.each([
    ["MD5", "", "d41d8cd98f00b204e9800998ecf8427e"],
    ["SHA-1", "abc", "a9993e364706816aba3e25717850c26c9cd0d89d"],
    ["SHA-256", "", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
    [
      "SHA-256",
      "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
      "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
    ],
    [
      "SHA-384",
      "abc",
      "cb00753f45a35e8bb5a03d699ac65007272c32ab0eded1631a8b605a43ff5bed8086072ba1e7cc2358baeca134c825a7",
    ],
    [
      "SHA-512",
      "",
      "cf83e1357eefb8bdf1542850d66d8007d620e4050b5715dc83f4a921d36ce9ce47d0d13c5d85f2b0ff8318d2877eec2f63b931bd47417a81a538327af927da3e",
    ],
    [
      "SHA-512",
      "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu",
      "8e959b75dae313da8cf4f72814fc143f8f7779c6eb9f7fa17299aeadb6889018501d289e4900f7e4331b99dec4b5433ac7d329eeb6dd26545e96e55b874be909",
    ],
    ["MD5", "héllo", "be50e8478cf24ff3595bc7307fb91b50"],
  ])("%s(%j)", (algorithm, data, expected) => {
    const s: PathScope = { ...scope, input: { data } };
    expect(evaluateIntrinsic(`States.Hash($.data, '${algorithm}')`, s, seededRandom("h"))).toBe(
      expected,
    );
  });

  it.each([
    [
      "States.Hash($.str, 'SHA-999')",
      "the algorithm 'SHA-999' is not supported; use one of MD5, SHA-1, SHA-256, SHA-384, SHA-512",
    ],
    ["States.Hash($.str, 'sha-256')", "is not supported"],
    ["States.Hash($.obj, 'MD5')", "the first argument must be a string"],
    ["States.Hash($.str, 1)", "the second argument must be a string"],
  ])("fails: %s", (text, cause) => {
    const [error, message] = failure(text);
    expect(error).toBe("States.IntrinsicFailure");
    expect(message).toContain(cause);
  });
});

describe("States.JsonMerge", () => {
  it("merges shallowly, the second object winning", () => {
    expect(run("States.JsonMerge($.obj, $.obj2, false)")).toStrictEqual({ a: 1, b: 3, c: 4 });
    const nested: PathScope = { ...scope, input: { x: { a: { p: 1, q: 2 } }, y: { a: { p: 9 } } } };
    expect(
      evaluateIntrinsic("States.JsonMerge($.x, $.y, false)", nested, seededRandom("m")),
    ).toStrictEqual({ a: { p: 9 } });
  });

  it.each([
    ["States.JsonMerge($.obj, $.obj2, true)", "deep merging is not supported"],
    ["States.JsonMerge($.obj, $.obj2, 'false')", "the third argument must be a boolean"],
    ["States.JsonMerge($.arr, $.obj2, false)", "the first argument must be a JSON object"],
    ["States.JsonMerge($.obj, $.nothing, false)", "the second argument must be a JSON object"],
  ])("fails: %s", (text, cause) => {
    const [error, message] = failure(text);
    expect(error).toBe("States.IntrinsicFailure");
    expect(message).toContain(cause);
  });
});

describe("math functions", () => {
  it.each<[number, number, number]>([
    [-9, 3, -6],
    [1.49, 1.5, 3],
    [1.5, 1.51, 4],
    [-1.49, -1.5, -2],
    [-1.5, -1.51, -3],
    [1.49, 0, 1],
    [1.49, -1.49, 0],
    [0.5, 0, 1],
    [2.5, 0, 3],
    [-0.5, 0.5, 1],
    [-0.5, 0, 0],
    [-2.5, 0, -2],
    [-3.5, 0, -3],
  ])("States.MathAdd(%d, %d) = %d (Java Math.round)", (a, b, sum) => {
    expect(
      evaluateIntrinsic(
        "States.MathAdd($.a, $.b)",
        { ...scope, input: { a, b } },
        seededRandom("a"),
      ),
    ).toBe(sum);
  });

  it("MathAdd accepts paths, literals and nested calls", () => {
    expect(run("States.MathAdd($.num, -1)")).toBe(4);
    expect(run("States.MathAdd(States.ArrayLength($.arr), $n)")).toBe(11);
  });

  it("MathRandom draws an integer in [start, end) from the execution's random source", () => {
    const random = seededRandom("draws");
    const seen = new Set<Json>();
    for (let i = 0; i < 200; i++)
      seen.add(evaluateIntrinsic("States.MathRandom(1, 4)", scope, random));
    expect([...seen].sort()).toStrictEqual([1, 2, 3]);
    expect(random.counter).toBe(200);
  });

  it("MathRandom rounds fractional bounds and handles negative ranges", () => {
    const random = seededRandom("r");
    for (let i = 0; i < 50; i++) {
      const a = evaluateIntrinsic("States.MathRandom(12.5, 44.51)", scope, random) as number;
      expect(Number.isInteger(a) && a >= 13 && a < 45).toBe(true);
      const b = evaluateIntrinsic("States.MathRandom(-99999, -9999)", scope, random) as number;
      expect(b >= -99999 && b < -9999).toBe(true);
    }
  });

  it("MathRandom with a seed depends only on the seed and draws nothing from the stream", () => {
    const a = seededRandom("one");
    const b = seededRandom("two");
    const x = evaluateIntrinsic("States.MathRandom(0, 999, 3)", scope, a);
    expect(evaluateIntrinsic("States.MathRandom(0, 999, 3)", scope, b)).toBe(x);
    expect(a.counter).toBe(0);
    expect(x as number).toBeGreaterThanOrEqual(0);
    expect(x as number).toBeLessThan(999);
  });

  it("replays: the same seed and counter give the same value", () => {
    expect(run("States.MathRandom(0, 1000000)", seededRandom("s", 7))).toBe(
      run("States.MathRandom(0, 1000000)", seededRandom("s", 7)),
    );
  });

  it.each([
    ["States.MathAdd('1', 2)", "the first argument must be a number"],
    ["States.MathAdd(1, $.nothing)", "the second argument must be a number"],
    ["States.MathAdd(3000000000, 1)", "must be an integer between -2147483648 and 2147483647"],
    ["States.MathRandom(5, 5)", "the end (5) must be greater than the start (5)"],
    ["States.MathRandom(5, 1)", "must be greater than the start"],
    ["States.MathRandom('a', 1)", "the first argument must be a number"],
    ["States.MathRandom(1, 5, 'seed')", "the third argument must be a number"],
  ])("fails: %s", (text, cause) => {
    const [error, message] = failure(text);
    expect(error).toBe("States.IntrinsicFailure");
    expect(message).toContain(cause);
  });
});

describe("States.StringSplit", () => {
  it.each<[string, string, Json]>([
    ["a,b,c,d,e", ",", ["a", "b", "c", "d", "e"]],
    ["This.is+a,test=string", ".+,=", ["This", "is", "a", "test", "string"]],
    ["split on T and \nnew line", "T\n", ["split on ", " and ", "new line"]],
    [" ", ",", [" "]],
    ["", ",", []],
    [",,a,,b,,", ",", ["a", "b"]],
    ["abc", "", ["abc"]],
    ["1,2", "x", ["1,2"]],
  ])("%j split on %j", (text, delimiters, expected) => {
    const s: PathScope = { ...scope, input: { text, delimiters } };
    expect(
      evaluateIntrinsic("States.StringSplit($.text, $.delimiters)", s, seededRandom("s")),
    ).toStrictEqual(expected);
  });

  it("works with literals and nested calls (AWS's ARN example)", () => {
    const s: PathScope = {
      ...scope,
      input: {
        ImageRecipe: {
          Arn: "arn:aws:imagebuilder:us-east-1:123:image-recipe/my.recipe.name/1.0.0",
        },
      },
    };
    const text =
      "States.Format('{}.{}.{}', States.ArrayGetItem(States.StringSplit(States.ArrayGetItem(States.StringSplit($.ImageRecipe.Arn, '/'), 2), '.'), 0), States.ArrayGetItem(States.StringSplit(States.ArrayGetItem(States.StringSplit($.ImageRecipe.Arn, '/'), 2), '.'), 1), States.ArrayGetItem(States.StringSplit(States.ArrayGetItem(States.StringSplit($.ImageRecipe.Arn, '/'), 2), '.'), 2))";
    expect(evaluateIntrinsic(text, s, seededRandom("s"))).toBe("1.0.0");
  });

  it.each([
    ["States.StringSplit($.arr, ',')", "the first argument must be a string"],
    ["States.StringSplit('a', 1)", "the second argument must be a string"],
  ])("fails: %s", (text, cause) => {
    const [error, message] = failure(text);
    expect(error).toBe("States.IntrinsicFailure");
    expect(message).toContain(cause);
  });
});

describe("States.UUID", () => {
  it("gives a version 4 UUID from the random source, replayably", () => {
    const uuid = run("States.UUID()", seededRandom("u"));
    expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(run("States.UUID()", seededRandom("u"))).toBe(uuid);
    expect(run("States.UUID()", seededRandom("v"))).not.toBe(uuid);
  });
});

describe("evaluation errors", () => {
  it("a path argument that selects nothing is States.Runtime, worded as AWS does", () => {
    expect(failure("States.Format('{}', $.missing)")).toStrictEqual([
      "States.Runtime",
      `The JSONPath '$.missing' could not be found in the input '${JSON.stringify(scope.input)}'`,
    ]);
    try {
      evaluateIntrinsic("States.Array($$.Nope)", scope, seededRandom("x"), "x.$");
    } catch (error) {
      expect(error).toBeInstanceOf(StatesError);
      expect((error as StatesError).cause).toBe(
        `The JSONPath '$$.Nope' specified for the field 'x.$' could not be found in the input '${JSON.stringify(scope.context)}'`,
      );
    }
    expect(failure("States.Array($nosuchvar)")[0]).toBe("States.Runtime");
  });

  it("a malformed call or unknown function is States.IntrinsicFailure", () => {
    expect(failure("States.Nope()")).toStrictEqual([
      "States.IntrinsicFailure",
      "Unknown intrinsic function 'States.Nope'.",
    ]);
    expect(failure("States.Array(")[0]).toBe("States.IntrinsicFailure");
  });

  it("a path argument with a null value passes null", () => {
    expect(run("States.Array($.nothing)")).toStrictEqual([null]);
  });

  it("an indefinite path argument passes the list of matches", () => {
    expect(run("States.ArrayLength($.arr[?(@ > 4)])")).toBe(5);
  });
});

describe("path arguments with a '.' before a bracket (as AWS accepts them)", () => {
  it.each<[string, Json]>([
    ["States.ArrayGetItem($.arr.[*], 0)", 1],
    ["States.Format('{} and {}', $.arr.[0], $.arr.[8])", "1 and 9"],
    ["States.ArrayLength($.arr.[*])", 9],
    ["States.JsonToString($.obj.['a'])", "1"],
  ])("%s", (call, expected) => {
    expect(run(call)).toStrictEqual(expected);
    expect(validateIntrinsic(call)).toBeUndefined();
  });
});
