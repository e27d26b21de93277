import { afterEach, describe, expect, it } from "vitest";
import type { Json } from "../../engine/core/json.js";
import { jsonLengthExceeds } from "../../engine/jsonpath/budget.js";
import {
  configurePathLimits,
  DEFAULT_PATH_LIMITS,
  parsePath,
  PathLimitExceeded,
  PathSyntaxError,
  readPath,
} from "../../engine/jsonpath/index.js";

/** The bounds on one JSONPath evaluation (engine/jsonpath/budget.ts). */
afterEach(() => configurePathLimits(DEFAULT_PATH_LIMITS));

const scope = (input: Json) => ({ input, context: {}, variables: {} });

function nested(depth: number): Json {
  let value: Json = 1;
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

function failure(path: string, input: Json): PathLimitExceeded {
  try {
    readPath(path, scope(input));
  } catch (e) {
    if (e instanceof PathLimitExceeded) return e;
    throw e;
  }
  throw new Error(`${path} was read`);
}

describe("the visit budget", () => {
  it("stops $..a..a..a on input nested 250 deep, with States.Runtime", () => {
    const e = failure("$..a..a..a", nested(250));
    expect(e.error).toBe("States.Runtime");
    expect(e.cause).toBe(
      "Invalid path '$..a..a..a' : evaluating it visited more than 1000000 nodes, the most Stepwise visits for one path",
    );
  });

  it("keeps Jayway's results, duplicates included, below it", () => {
    const input = { a: { a: { a: 1 } } };
    expect(readPath("$..a..a", scope(input))).toEqual({
      found: true,
      value: [{ a: 1 }, 1, 1],
    });
  });

  it("counts the paths inside filters", () => {
    configurePathLimits({ maxVisits: 1_000 });
    const items = Array.from({ length: 400 }, (_, i) => ({ v: i, tags: [i, i + 1] }));
    expect(readPath("$[?(@.v < 10)].v", scope(items))).toEqual({
      found: true,
      value: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9],
    });
    expect(failure("$[?(@.tags[*] && @..v)]", items).cause).toContain("more than 1000 nodes");
  });

  it("leaves definite paths alone", () => {
    configurePathLimits({ maxVisits: 1 });
    expect(readPath("$.a.a.a", scope(nested(5)))).toEqual({ found: true, value: { a: { a: 1 } } });
  });
});

describe("the result size", () => {
  it("refuses a list of matches whose JSON would be too long", () => {
    // Each of the 2,000 levels is matched by `..*`, with everything below it.
    const deep = nested(2_000);
    configurePathLimits({ maxResultChars: 1_000_000 });
    expect(failure("$..*", deep).cause).toBe(
      "Invalid path '$..*' : its result would have more than 1000000 characters of JSON, the most Stepwise builds for one path",
    );
    configurePathLimits({ maxResultChars: 100_000_000 });
    expect(readPath("$..*", scope(deep)).found).toBe(true);
  });

  it("measures JSON as JSON.stringify writes it (strings without escapes)", () => {
    const values: Json[] = [
      { a: [1, 2.5, "x"], "b c": { d: null, e: true, f: false }, g: [] },
      [[["deep"]]],
      "plain",
      -12,
      {},
    ];
    const shared = { k: "v".repeat(100) };
    values.push(shared, [shared, shared]);
    const length = JSON.stringify(values).length;
    expect(jsonLengthExceeds(values, length)).toBe(false);
    expect(jsonLengthExceeds(values, length - 1)).toBe(true);
  });
});

describe("regular expressions in filters", () => {
  it("run in linear time", () => {
    const input = [{ s: `${"a".repeat(30)}!` }, { s: "ab" }];
    expect(readPath("$[?(@.s =~ /(a+)+/)]", scope(input))).toEqual({ found: true, value: [] });
    expect(readPath("$[?(@.s =~ /(a|b)+/)].s", scope(input))).toEqual({
      found: true,
      value: ["ab"],
    });
  });

  it("refuse backreferences and lookaround when the path is parsed", () => {
    expect(() => parsePath("$[?(@.s =~ /(a)\\1/)]")).toThrow(PathSyntaxError);
    expect(() => parsePath("$[?(@.s =~ /a(?=b)/)]")).toThrow(/uses a lookahead '\(\?='/);
  });
});
