import { describe, expect, it } from "vitest";
import { isStatesError } from "../../engine/core/errors.js";
import type { Json, JsonObject } from "../../engine/core/json.js";
import {
  invalidPathCause,
  isReferencePath,
  missingPathCause,
  parsePath,
  PathSyntaxError,
  readPath,
  writeReferencePath,
  type PathScope,
} from "../../engine/jsonpath/index.js";

const books: JsonObject[] = [
  { category: "reference", author: "Nigel Rees", title: "Sayings", price: 8.95 },
  { category: "fiction", author: "Evelyn Waugh", title: "Sword", price: 12.99 },
  {
    category: "fiction",
    author: "Herman Melville",
    title: "Moby Dick",
    isbn: "0-553-21311-3",
    price: 8.99,
  },
  {
    category: "fiction",
    author: "J. R. R. Tolkien",
    title: "LOTR",
    isbn: "0-395-19395-8",
    price: 22.99,
  },
];
const bicycle: JsonObject = { color: "red", price: 19.95 };
const store = {
  store: { book: books, bicycle },
  expensive: 10,
  "a b": 1,
  "x-y": 2,
  nested: { list: [[1, 2], [3]], empty: [], nil: null, text: "hello" },
};

const scope: PathScope = {
  input: store,
  context: {
    Execution: { Id: "exec-1", Input: { a: 1 } },
    Map: { Item: { Index: 2, Value: "v" } },
  },
  variables: { count: 3, user: { name: "Ann", tags: ["a", "b"] }, _x1: null },
};

function read(path: string): Json | "<missing>" {
  const result = readPath(path, scope);
  return result.found ? result.value : "<missing>";
}

describe("parsePath", () => {
  it.each([
    ["$", "input", 0],
    ["$$", "context", 0],
    ["$$.Execution.Id", "context", 2],
    ["$count", "variable", 0],
    ["$user.name", "variable", 1],
    ["$.a.b", "input", 2],
    ["$['a b']", "input", 1],
    ['$["x"]', "input", 1],
    ["$[0]", "input", 1],
    ["$[-1]", "input", 1],
    ["$.a.*", "input", 2],
    ["$.a[*]", "input", 2],
    ["$.a[1:3]", "input", 2],
    ["$.a[:2]", "input", 2],
    ["$.a[-2:]", "input", 2],
    ["$.a[0,1]", "input", 2],
    ["$['a','b']", "input", 1],
    ["$..price", "input", 1],
    ["$..*", "input", 1],
    ["$..[0]", "input", 1],
    ["$.a[?(@.price < 10)]", "input", 2],
    ["$.a[?(@.x)]", "input", 2],
    ["$.a[?(@.a == 'b' && @.c > 1)]", "input", 2],
    ["$.a[?(@.a == 'b' || !(@.c >= 1))]", "input", 2],
    ["$.a[?(@.name =~ /Ann.*/i)]", "input", 2],
    ["$.a[?(@.t in ['x', 'y'])]", "input", 2],
    ["$.a.length()", "input", 2],
    [" $.a ", "input", 1],
  ])("parses %s", (text, root, count) => {
    const expr = parsePath(text);
    expect(expr.root.kind).toBe(root);
    expect(expr.segments).toHaveLength(count);
  });

  it.each([
    ["", "must start with '$'"],
    ["a.b", "must start with '$'"],
    ["$.", "must not end with '.'"],
    ["$..", "must not end with '..'"],
    ["$.a b", "bracket notation"],
    ["$[", "ended"],
    ["$[]", "empty brackets"],
    ["$['a'", "ended"],
    ["$['a", "unterminated"],
    ["$[abc]", "unexpected character"],
    ["$.a[?(@.x <)]", "unexpected"],
    ["$.a[?(1)]", "comparison operator"],
    ["$.a.nope()", "unknown path function"],
    ["$.a.length().b", "last segment"],
    ["$.a[1:2:3]", "step"],
  ])("refuses %j", (text, message) => {
    expect(() => parsePath(text)).toThrow(PathSyntaxError);
    expect(() => parsePath(text)).toThrow(message);
  });

  it("caches: the same text gives the same parsed object", () => {
    expect(parsePath("$.cache.me")).toBe(parsePath("$.cache.me"));
  });

  it("marks definite and reference paths", () => {
    expect(parsePath("$.a[0].b").definite).toBe(true);
    expect(parsePath("$['a','b']").definite).toBe(true);
    expect(parsePath("$['a','b'].c").definite).toBe(false);
    expect(parsePath("$.a[*]").definite).toBe(false);
  });
});

describe("isReferencePath", () => {
  it.each([
    ["$", true],
    ["$.a.b", true],
    ["$['a b'].c", true],
    ["$.a[0]", true],
    ["$.a[-1]", true],
    ["$$.Execution.Input", true],
    ["$var.x", true],
    ["$.a[*]", false],
    ["$.a.*", false],
    ["$..a", false],
    ["$.a[?(@.x)]", false],
    ["$.a[1:2]", false],
    ["$.a[0,1]", false],
    ["$['a','b']", false],
    ["$.a.length()", false],
    ["not a path", false],
    ["$.a b", false],
  ])("%s → %s", (text, expected) => {
    expect(isReferencePath(text)).toBe(expected);
  });
});

describe("readPath: definite paths", () => {
  it.each<[string, Json | "<missing>"]>([
    ["$", store],
    ["$.expensive", 10],
    ["$.store.bicycle.color", "red"],
    ["$['store']['bicycle']['color']", "red"],
    ['$["store"]["bicycle"].price', 19.95],
    ["$['a b']", 1],
    ["$.x-y", 2],
    ["$.store.book[0].title", "Sayings"],
    ["$.store.book[-1].title", "LOTR"],
    ["$.nested.list[0][1]", 2],
    ["$.nested.nil", null],
    ["$.nested.missing", "<missing>"],
    ["$.nested.nil.deeper", "<missing>"],
    ["$.nested.text.length", "<missing>"],
    ["$.store.book[10]", "<missing>"],
    ["$.store.book[-10]", "<missing>"],
    ["$.store[0]", "<missing>"],
    ["$.store.book.title", "<missing>"],
    ["$.store.bicycle['color','price']", { color: "red", price: 19.95 }],
    ["$.store.bicycle['color','nope']", { color: "red" }],
    ["$.store.book.length()", 4],
    ["$.nested.text.length()", 5],
    ["$.store.bicycle.keys()", ["color", "price"]],
  ])("%s", (path, expected) => {
    expect(read(path)).toStrictEqual(expected);
  });

  it("reads the context object with $$ and variables with $name", () => {
    expect(read("$$")).toStrictEqual(scope.context);
    expect(read("$$.Execution.Input.a")).toBe(1);
    expect(read("$$.Map.Item.Value")).toBe("v");
    expect(read("$count")).toBe(3);
    expect(read("$user.name")).toBe("Ann");
    expect(read("$user.tags[1]")).toBe("b");
    expect(read("$_x1")).toBe(null);
    expect(read("$nosuch")).toBe("<missing>");
    expect(read("$nosuch.x")).toBe("<missing>");
  });

  it("returns the input node itself, without copying", () => {
    const result = readPath("$.store.bicycle", scope);
    expect(result.found && result.value).toBe(store.store.bicycle);
  });

  it("does not see inherited properties", () => {
    expect(read("$.toString")).toBe("<missing>");
    expect(read("$.store.book.constructor")).toBe("<missing>");
  });

  it("reads a '__proto__' key as plain data", () => {
    const input = JSON.parse('{"__proto__": {"x": 1}}') as Json;
    expect(readPath("$.__proto__.x", { ...scope, input })).toStrictEqual({ found: true, value: 1 });
  });
});

describe("readPath: indefinite paths give an array of matches (Jayway)", () => {
  it.each<[string, Json]>([
    [
      "$.store.book[*].author",
      ["Nigel Rees", "Evelyn Waugh", "Herman Melville", "J. R. R. Tolkien"],
    ],
    ["$.store.book.*.price", [8.95, 12.99, 8.99, 22.99]],
    ["$.store.*", [store.store.book, store.store.bicycle]],
    ["$.store.book[1:3].title", ["Sword", "Moby Dick"]],
    ["$.store.book[:2].title", ["Sayings", "Sword"]],
    ["$.store.book[-2:].title", ["Moby Dick", "LOTR"]],
    ["$.store.book[2:].title", ["Moby Dick", "LOTR"]],
    ["$.store.book[1:100].title", ["Sword", "Moby Dick", "LOTR"]],
    ["$.store.book[0,2].title", ["Sayings", "Moby Dick"]],
    ["$.store.book[0,9].title", ["Sayings"]],
    [
      "$.store.book[*]['title','price']",
      [
        { title: "Sayings", price: 8.95 },
        { title: "Sword", price: 12.99 },
        { title: "Moby Dick", price: 8.99 },
        { title: "LOTR", price: 22.99 },
      ],
    ],
    ["$..price", [8.95, 12.99, 8.99, 22.99, 19.95]],
    ["$..author", ["Nigel Rees", "Evelyn Waugh", "Herman Melville", "J. R. R. Tolkien"]],
    ["$.store..price", [8.95, 12.99, 8.99, 22.99, 19.95]],
    ["$..book[2].title", ["Moby Dick"]],
    ["$..book[-1].title", ["LOTR"]],
    ["$.nested.list..[0]", [[1, 2], 1, 3]],
    ["$.nested.empty[*]", []],
    ["$.nested.missing[*]", []],
    ["$.nested.text[*]", []],
    ["$..nope", []],
  ])("%s", (path, expected) => {
    expect(read(path)).toStrictEqual(expected);
  });

  it("deep scan with a wildcard lists every descendant in document order", () => {
    const input = { a: { b: 1, c: [2, 3] }, d: 4 };
    expect(readPath("$..*", { ...scope, input })).toStrictEqual({
      found: true,
      value: [{ b: 1, c: [2, 3] }, 4, 1, [2, 3], 2, 3],
    });
  });
});

describe("readPath: filters", () => {
  const titles = (path: string): Json => {
    const result = readPath(path, scope);
    return result.found && Array.isArray(result.value)
      ? result.value.map((b) => (b as { title: Json }).title)
      : "<not an array>";
  };

  it.each<[string, Json]>([
    ["$.store.book[?(@.price < 10)]", ["Sayings", "Moby Dick"]],
    ["$.store.book[?(@.price <= 8.99)]", ["Sayings", "Moby Dick"]],
    ["$.store.book[?(@.price > 20)]", ["LOTR"]],
    ["$.store.book[?(@.price >= 22.99)]", ["LOTR"]],
    ["$.store.book[?(@.isbn)]", ["Moby Dick", "LOTR"]],
    ["$.store.book[?(!@.isbn)]", ["Sayings", "Sword"]],
    ["$.store.book[?(@.category == 'fiction' && @.price > 10)]", ["Sword", "LOTR"]],
    ["$.store.book[?(@.category == 'reference' || @.price > 20)]", ["Sayings", "LOTR"]],
    ['$.store.book[?(@.category == "reference")]', ["Sayings"]],
    ["$.store.book[?(@.category != 'fiction')]", ["Sayings"]],
    ["$.store.book[?(@.isbn != '0-395-19395-8')]", ["Sayings", "Sword", "Moby Dick"]],
    ["$.store.book[?(@.price < $.expensive)]", ["Sayings", "Moby Dick"]],
    ["$.store.book[?(@.author =~ /.*Melville/)]", ["Moby Dick"]],
    ["$.store.book[?(@.author =~ /nigel rees/i)]", ["Sayings"]],
    ["$.store.book[?(@.author =~ /Nigel/)]", []],
    ["$.store.book[?(@.title in ['Sword', 'LOTR'])]", ["Sword", "LOTR"]],
    ["$.store.book[?(@.title nin ['Sword', 'LOTR'])]", ["Sayings", "Moby Dick"]],
    ["$.store.book[?(@.title size 4)]", ["LOTR"]],
    ["$.store.book[?((@.price < 9) && (@.category == 'fiction'))]", ["Moby Dick"]],
    ["$.store.book[?(@.title > 'M')]", ["Sayings", "Sword", "Moby Dick"]],
    ["$.store.book[?(@.price == '8.95')]", ["Sayings"]],
  ])("%s", (path, expected) => {
    expect(titles(path)).toStrictEqual(expected);
  });

  it("set operators and emptiness", () => {
    const input = { items: [{ tags: ["a", "b"] }, { tags: ["c"] }, { tags: [] }] };
    const count = (path: string) => {
      const r = readPath(path, { ...scope, input });
      return r.found && Array.isArray(r.value) ? r.value.length : -1;
    };
    expect(count("$.items[?(@.tags subsetof ['a', 'b', 'z'])]")).toBe(2);
    expect(count("$.items[?(@.tags anyof ['c', 'q'])]")).toBe(1);
    expect(count("$.items[?(@.tags noneof ['a'])]")).toBe(2);
    expect(count("$.items[?(@.tags empty true)]")).toBe(1);
    expect(count("$.items[?(@.tags empty false)]")).toBe(2);
    expect(count("$.items[?(@.tags.length() > 1)]")).toBe(1);
  });

  it("filters on nested objects and on null", () => {
    const input = { xs: [{ a: { b: 1 } }, { a: { b: 2 } }, { a: null }] };
    expect(readPath("$.xs[?(@.a.b == 2)]", { ...scope, input })).toStrictEqual({
      found: true,
      value: [{ a: { b: 2 } }],
    });
    expect(readPath("$.xs[?(@.a == null)]", { ...scope, input })).toStrictEqual({
      found: true,
      value: [{ a: null }],
    });
  });
});

describe("writeReferencePath (ResultPath)", () => {
  it.each<[Json, string, Json, Json]>([
    [{ a: 1 }, "$", "r", "r"],
    [{ a: 1 }, "$.b", "r", { a: 1, b: "r" }],
    [{ a: 1 }, "$.a", { x: 1 }, { a: { x: 1 } }],
    [{ a: { keep: true } }, "$.a.b", 2, { a: { keep: true, b: 2 } }],
    [{}, "$.a.b.c", 3, { a: { b: { c: 3 } } }],
    [{ a: [1, 2] }, "$.a[1]", 9, { a: [1, 9] }],
    [{ a: [1, 2] }, "$.a[-1]", 9, { a: [1, 9] }],
    [{ a: [{ x: 1 }] }, "$.a[0].y", 2, { a: [{ x: 1, y: 2 }] }],
    [{ a: 1 }, "$['b c']", true, { a: 1, "b c": true }],
    [{ a: null }, "$.a", 1, { a: 1 }],
  ])("%j with %s", (target, path, value, expected) => {
    expect(writeReferencePath(target, path, value)).toStrictEqual(expected);
  });

  it("never mutates its target and shares untouched parts", () => {
    const target = { a: { b: 1 }, other: { big: [1, 2, 3] } };
    const before = JSON.stringify(target);
    const result = writeReferencePath(target, "$.a.c", 2) as typeof target & { a: { c: number } };
    expect(JSON.stringify(target)).toBe(before);
    expect(result.other).toBe(target.other);
    expect(result.a).not.toBe(target.a);
  });

  it.each<[Json, string]>([
    ["text", "$.a"],
    [5, "$.a"],
    [null, "$.a"],
    [[1], "$.a"],
    [{ a: "text" }, "$.a.b"],
    [{ a: 1 }, "$.a[0]"],
    [{ a: [1] }, "$.a[3]"],
    [{ a: 1 }, "$.a[*]"],
    [{ a: 1 }, "$$.a"],
    [{ a: 1 }, "$var.a"],
    [{ a: 1 }, "no path"],
  ])("fails with States.ResultPathMatchFailure: %j at %s", (target, path) => {
    let caught: unknown;
    try {
      writeReferencePath(target, path, 1);
    } catch (error) {
      caught = error;
    }
    expect(isStatesError(caught)).toBe(true);
    if (isStatesError(caught)) {
      expect(caught.error).toBe("States.ResultPathMatchFailure");
      expect(caught.cause).toBe(
        `Unable to apply ReferencePath ${path} to input ${JSON.stringify(target)}`,
      );
    }
  });

  it("stores a '__proto__' key as data", () => {
    const result = writeReferencePath({}, "$.__proto__", { polluted: true }) as Record<
      string,
      unknown
    >;
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(Object.keys(result)).toStrictEqual(["__proto__"]);
  });
});

describe("causes for paths that select nothing", () => {
  const s: PathScope = { input: { a: { b: 1 }, n: null, t: "x" }, context: {}, variables: {} };

  it("words InputPath/OutputPath failures as AWS records them", () => {
    expect(invalidPathCause("$.NoSuchInputPath", s)).toBe(
      "Invalid path '$.NoSuchInputPath' : No results for path: $['NoSuchInputPath']",
    );
    expect(invalidPathCause("$.no.such.result.path", s)).toBe(
      "Invalid path '$.no.such.result.path' : Missing property in path $['no']",
    );
    expect(invalidPathCause("$.a.c", s)).toBe(
      "Invalid path '$.a.c' : No results for path: $['a']['c']",
    );
    expect(invalidPathCause("$.a.b[3]", s)).toContain("$['a']['b'][3]");
    expect(invalidPathCause("$.t.x", s)).toContain(
      "Expected to find an object with property ['x'] in path $['t']",
    );
  });

  it("words payload template failures as AWS records them", () => {
    expect(missingPathCause("$.nope.deep", { ...s, input: { other: 1 } }, "missing.$")).toBe(
      "The JSONPath '$.nope.deep' specified for the field 'missing.$' could not be found in the input '{\"other\":1}'",
    );
  });
});

/**
 * Forms AWS accepts that a strict reading of Jayway's grammar does not show: a '.'
 * directly before a bracket (Jayway's readDotToken skips the dot and reads the next
 * token) and an unquoted right-hand side in a filter (kept as a string, as Jayway
 * 2.0's Criteria did). Each with the value it evaluates to.
 */
describe("readPath: dot before a bracket and unquoted filter values", () => {
  const input = {
    items: [
      { name: "first", x: 1 },
      { name: "second", x: -1 },
      { name: "third", x: 5 },
    ],
    docs: [
      { Name: "Receipt", id: 1 },
      { Name: "Invoice", id: 2 },
      { Name: "true", id: 3 },
      { Name: "trueish", id: 4 },
    ],
  };
  const at = (path: string) => readPath(path, { ...scope, input });

  it.each<[string, Json]>([
    ["$.items.[0].name", "first"],
    ["$.items.[-1].name", "third"],
    ["$.items.[1]", { name: "second", x: -1 }],
    ["$.['items'][2].x", 5],
    ["$.items.[0,2].name", ["first", "third"]],
    ["$.items.[*].name", ["first", "second", "third"]],
    ["$.items.[1:].name", ["second", "third"]],
    ["$.items.[?(@.x > 0)].name", ["first", "third"]],
    ["$.docs[?(@.Name==Receipt)].id", [1]],
    ["$.docs[?(@.Name == Invoice)].id", [2]],
    ["$.docs[?(@.Name != Receipt)].id", [2, 3, 4]],
    ["$.docs[?(@.Name==Receipt || @.Name==Invoice)].id", [1, 2]],
    ["$.docs[?(@.Name==Receipt&&@.id==1)].id", [1]],
    ["$.docs[?(@.Name==trueish)].id", [4]],
    ["$.docs[?(@.Name==true)].id", []],
    ["$.docs[?(@.Name=='true')].id", [3]],
    ["$.docs.[?(@.Name==Nobody)]", []],
  ])("%s", (path, expected) => {
    expect(at(path)).toStrictEqual({ found: true, value: expected });
  });

  it("reads $.[0] and $.[*] on an array input", () => {
    const list = ["a", "b"];
    expect(readPath("$.[0]", { ...scope, input: list })).toStrictEqual({ found: true, value: "a" });
    expect(readPath("$.[*]", { ...scope, input: list })).toStrictEqual({
      found: true,
      value: ["a", "b"],
    });
    expect(readPath("$.[?(@ == 'b')]", { ...scope, input: list })).toStrictEqual({
      found: true,
      value: ["b"],
    });
  });

  it("keeps $.a.[0] a reference path (it names one node) and $.[*] not", () => {
    expect(isReferencePath("$.items.[0].name")).toBe(true);
    expect(isReferencePath("$.[*]")).toBe(false);
  });

  it("still refuses a path ending in '.' and a '.' before ']' or another '.'", () => {
    for (const bad of ["$.items.", "$.items...x", "$.[", "$.[0"]) {
      expect(() => parsePath(bad), bad).toThrow(PathSyntaxError);
    }
  });
});
