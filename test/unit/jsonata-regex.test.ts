import officialJsonata from "jsonata";
import { afterEach, describe, expect, it } from "vitest";
import { compileExpression } from "../../engine/jsonata/compile.js";
import { configureJsonataLimits, DEFAULT_JSONATA_LIMITS } from "../../engine/jsonata/limits.js";
import { boundedOverhang } from "../../engine/jsonata/regex-cost.js";
import { METER_BINDING, type Meter } from "../../engine/jsonata/runtime.js";

/**
 * JSONata's regular expressions run on RE2 (engine/jsonata/regex.ts): the same
 * answers as the published jsonata (on JavaScript's RegExp) for the patterns both
 * take, linear time for the ones that made RegExp backtrack, a named refusal for
 * backreferences and lookaround, and every search charged to the step meter.
 */
afterEach(() => configureJsonataLimits(DEFAULT_JSONATA_LIMITS));

function ours(
  expression: string,
  meter: Meter = { steps: 0 },
): { value?: unknown; error?: string } {
  try {
    const value = compileExpression(expression).evaluate(undefined, { [METER_BINDING]: meter });
    return { value: JSON.parse(JSON.stringify(value ?? null)) };
  } catch (e) {
    const err = e as { code?: string; message?: string };
    return { error: err.code ? `${err.code}: ${err.message}` : String(err.message) };
  }
}

async function official(expression: string): Promise<{ value?: unknown; code?: string }> {
  try {
    const value = await officialJsonata(expression).evaluate(undefined);
    return { value: JSON.parse(JSON.stringify(value ?? null)) };
  } catch (e) {
    return { code: (e as { code?: string }).code ?? "error" };
  }
}

describe("the same answers as JavaScript's RegExp", () => {
  it.each([
    "$match('ab12cd34', /[0-9]+/)",
    "$match('John Smith, Jane Doe', /(\\w+) (\\w+)/)",
    "$match('abc', /(x)?b/)",
    "$match('ab', /(?<first>a)b/)",
    "$match('ABC abc', /b/i)",
    "$match('line1\\nline2', /^line\\d$/m)",
    "$match('a\\nb\\rc', /./)",
    "$match('\u{1F600}ab', /b/)",
    "$match('aaa', /a/, 2)",
    "$replace('hello world', /(o)/, '[$1]')",
    "$replace('hello world', /l+/, function($m){ $uppercase($m.match) })",
    "$replace('2024-01-02', /(\\d+)-(\\d+)-(\\d+)/, '$3/$2/$1')",
    "$replace('a/b/c', /\\//, '-', 1)",
    "$split('a, b,c ,d', /\\s*,\\s*/)",
    "$split('one two  three', / +/, 2)",
    "$contains('Hello', /hello/i)",
    "$contains('Hello', /^ello/)",
    "$contains('hello$world', /^hello\\$/)",
    "$match('aaa', /x*/)",
    // From the conformance data (AWS's examples).
    "$contains('0b3c7a1e-2f4d-4a6b-9c8d-1e2f3a4b5c6d', /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)",
    "$match('jane.doe+x@example.co', /^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$/)",
    "$match('123-45-6789', /^(\\d{3}-?\\d{2}-?\\d{4}|XXX-XX-XXXX)$/)",
  ])("%s", async (expression) => {
    const expected = await official(expression);
    const actual = ours(expression);
    if (expected.code !== undefined) expect(actual.error).toMatch(new RegExp(`^${expected.code}`));
    else expect(actual).toEqual({ value: expected.value });
  });
});

describe("patterns that made RegExp backtrack answer at once", () => {
  // The probe's inputs (issue 44): 15 s, 6 s and more than two minutes on RegExp.
  it("$match($pad('', 130, 'a'), /a*a*a*a*a*b/) finds nothing", () => {
    expect(ours('$match($pad("", 130, "a"), /a*a*a*a*a*b/)')).toEqual({ value: null });
  });

  it("/^(a|a)+$/ on 26 a's, followed or not by a character that fails it", () => {
    expect(ours("$contains($pad('', 26, 'a'), /^(a|a)+$/)")).toEqual({ value: true });
    expect(ours("$contains($pad('', 26, 'a') & '!', /^(a|a)+$/)")).toEqual({ value: false });
  });

  it("$replace on 900,000 a's", () => {
    expect(ours("$length($replace($pad('', 900000, 'a'), /a*a*a*a*a*b/, 'c'))")).toEqual({
      value: 900_000,
    });
  });

  it("nested repetitions", () => {
    expect(ours("$contains($pad('', 5000, 'a') & '!', /(a+)+$/)")).toEqual({ value: false });
    expect(ours("$contains($pad('', 5000, 'a') & '!', /^(\\w+\\s?)*$/)")).toEqual({ value: false });
  });
});

describe("patterns RE2 cannot run are refused, naming the construct", () => {
  it.each([
    ["$match('aa', /(a)\\1/)", "a backreference '\\1'"],
    ["$match('aa', /(?<x>a)\\k<x>/)", "a named backreference '\\k<…>'"],
    ["$match('ab', /a(?=b)/)", "a lookahead '(?='"],
    ["$match('ab', /a(?!c)/)", "a negative lookahead '(?!'"],
    ["$match('ab', /(?<=a)b/)", "a lookbehind '(?<='"],
    ["$match('ab', /(?<!c)b/)", "a negative lookbehind '(?<!'"],
  ])("%s", (expression, construct) => {
    const { error } = ours(expression);
    expect(error).toContain(`uses ${construct}, which Stepwise does not support`);
    expect(error).toContain("regular expressions run on RE2");
  });

  it("the same characters inside a class are no construct", () => {
    expect(ours("$match('(?=', /[(?=)]+/).match")).toEqual({ value: "(?=" });
    expect(ours("$contains('\\\\1', /[\\\\1]/)")).toEqual({ value: true });
  });
});

describe("searches are charged to the step meter", () => {
  it("a pattern that reads the rest of the text on every search exhausts the budget", () => {
    const meter = { steps: 0 };
    const { error } = ours("$replace($pad('', 20000, 'a'), /a*b|a/, 'c')", meter);
    expect(error).toMatch(/^D1012: The evaluation exceeded its budget of 500000 steps/);
    expect(meter.steps).toBeGreaterThan(DEFAULT_JSONATA_LIMITS.maxSteps);
  });

  it("the budget is the configured one", () => {
    configureJsonataLimits({ maxSteps: 1_000 });
    expect(ours("$replace($pad('', 5000, 'a'), /a*b|a/, 'c')").error).toMatch(
      /^D1012: The evaluation exceeded its budget of 1000 steps/,
    );
  });

  it("splitting a large text into many lines costs in proportion to the text", () => {
    // 200,000 characters in 20,000 lines, split on a string, then on a regex.
    const text = "$join([1..20000].$pad('', 9, 'x'), '\\n')";
    const byString = { steps: 0 };
    expect(ours(`$count($split(${text}, '\\n'))`, byString)).toEqual({ value: 20_000 });
    const byRegex = { steps: 0 };
    expect(ours(`$count($split(${text}, /\\r?\\n/))`, byRegex)).toEqual({ value: 20_000 });
    // About (200,000 + 20,000 × 13) / 16 steps; charged the rest of the text on every
    // search, it would be 125 million.
    expect(byRegex.steps - byString.steps).toBeLessThan(50_000);
  });

  it("a single search is charged the text it may read", () => {
    const meter = { steps: 0 };
    expect(ours("$contains($pad('', 64000, 'a'), /b/)", meter)).toEqual({ value: false });
    expect(meter.steps).toBeGreaterThanOrEqual(1_000);
  });
});

describe("boundedOverhang: which patterns a search cannot read far past its match", () => {
  it.each<[string, number | undefined]>([
    [",", 2],
    ["\\s+", 2],
    ["\\r?\\n", 3],
    ["[^,]*", 2],
    ["(\\d{4})-(\\d{2})", 8],
    ["^\\w+$", 2],
    ["\\bword\\b", 5],
    ["(?:ab)c*", 4],
    ["a*b|a", undefined],
    ["a+b", undefined],
    ["(ab)+", undefined],
    ["(a|b)", undefined],
    ["a(?=b)", undefined],
    ["\\d+\\s+", undefined],
  ])("%s", (source, expected) => {
    expect(boundedOverhang(source)).toBe(expected);
  });
});
