import officialJsonata from "jsonata";
import { describe, expect, it } from "vitest";
import { jsonata } from "../../engine/jsonata/runtime.js";

/**
 * The vendored evaluator is jsonata 2.2.2 with async/await removed. This compares
 * it with the published (async) package on expressions that cover the language:
 * same results, same error codes. Regenerating the vendored file after a jsonata
 * upgrade must keep this green.
 */
const INPUT = {
  Account: {
    Name: "Firefly",
    Order: [
      {
        OrderID: "o1",
        Product: [
          { Name: "Bowler Hat", Price: 34.45, Quantity: 2 },
          { Name: "Trilby", Price: 21.67, Quantity: 1 },
        ],
      },
      {
        OrderID: "o2",
        Product: [
          { Name: "Bowler Hat", Price: 34.45, Quantity: 4 },
          { Name: "Cloak", Price: 107.99, Quantity: 1 },
        ],
      },
    ],
  },
  items: [3, 1, 2],
  text: "Hello, World",
  nested: { a: { b: { c: [1, { d: 2 }] } } },
};

const EXPRESSIONS = [
  "1 + 2 * 3",
  "Account.Name",
  "Account.Order.OrderID",
  "Account.Order[0].Product.Name",
  "Account.Order.Product[Price > 30].Name",
  "$sum(Account.Order.Product.(Price * Quantity))",
  "Account.Order.Product{Name: $sum(Quantity)}",
  "Account.Order{OrderID: $count(Product)}",
  "Account.Order.Product^(>Price).Name",
  "Account.Order.Product^(Name, >Quantity).Quantity",
  "Account.Order#$i.Product.{'i': $i, 'n': Name}",
  "Account.Order@$o.Product@$p.{'o': $o.OrderID, 'p': $p.Name}",
  "Account.Order.Product[0]",
  "Account.Order.Product.Name[]",
  "[1..5]",
  "[1..5][$ % 2 = 0]",
  "items ~> $sort()",
  "$sort(items, function($a, $b){ $a < $b })",
  "$map(items, function($v, $i){ $v * $i })",
  "$filter(items, function($v){ $v > 1 })",
  "$reduce(items, function($acc, $v){ $acc + $v }, 10)",
  "$single(items, function($v){ $v = 2 })",
  "$sift(nested.a.b, function($v, $k){ $k = 'c' })",
  "$each(Account, function($v, $k){ $k })",
  "$keys(Account)",
  "$lookup(Account, 'Name')",
  "$spread({'a': 1, 'b': 2})",
  "$merge([{'a': 1}, {'b': 2}])",
  "$zip([1, 2], ['a', 'b'])",
  "$append([1], [2, 3])",
  "$distinct([1, 1, 2, 'a', 'a'])",
  "$reverse(items)",
  "$count(items)",
  "$max(items) - $min(items)",
  "$average(items)",
  "$string(nested)",
  "$string(nested, true)",
  "$length(text)",
  "$substring(text, 7, 5)",
  "$substringBefore(text, ',')",
  "$substringAfter(text, ', ')",
  "$uppercase(text) & $lowercase(text)",
  "$trim('  a   b ')",
  "$pad('x', 5, '#') & $pad('x', -5)",
  "$contains(text, /world/i)",
  "$split(text, /,\\s*/)",
  "$join(['a', 'b'], '-')",
  "$match('ab12cd34', /[0-9]+/)",
  "$replace(text, /(o)/, '[$1]')",
  "$replace(text, 'l', 'L', 2)",
  "$replace(text, /l+/, function($m){ $uppercase($m.match) })",
  "$number('42') + $abs(-1) + $floor(1.5) + $ceil(1.5) + $round(2.5) + $power(2, 3) + $sqrt(16)",
  "$formatNumber(1234.5678, '#,##0.00')",
  "$formatBase(255, 16)",
  "$formatInteger(1999, 'I')",
  "$parseInteger('MCMXCIX', 'I')",
  "$fromMillis(1510067557121)",
  "$fromMillis(1510067557121, '[Y0001]-[M01]-[D01] [H01]:[m01]')",
  "$toMillis('2017-11-07T15:07:37.121Z')",
  "$boolean(0) or $not(false)",
  "$exists(nested.a.x)",
  "$type(items) & $type(nested) & $type(null) & $type(1) & $type('s') & $type(true)",
  "$base64encode('hi') & $base64decode('aGk=')",
  "$encodeUrlComponent('a b&c') & $decodeUrl('a%20b')",
  "($x := 5; $y := function($n){ $n * $x }; $y(2))",
  "($fact := function($n){ $n <= 1 ? 1 : $n * $fact($n - 1) }; $fact(10))",
  "($loop := function($n, $acc){ $n = 0 ? $acc : $loop($n - 1, $acc + $n) }; $loop(2000, 0))",
  "$map(items, $string)",
  "(items)[1]",
  "nested.**.d",
  "nested.*.b",
  "$ ~> |nested.a|{'z': 1}, ['b']|",
  "true ? 'yes' : 'no'",
  "'a' in ['a', 'b']",
  "items[0] = 3 and items[1] != 2",
  "$clone(nested)",
  "($f := $substring(?, 0, 2); $f('hello'))",
  "$assert(true, 'never')",
  "{'a': undefined, 'b': 1}",
  "[]",
  "[[1]]",
  "$.items",
  "undefinedField",
];

const ERRORS = [
  "$undefinedFunction()",
  "1 + 'a'",
  "$error('custom')",
  "$assert(false, 'failed assertion')",
  "$sum('a')",
  "[1..1e8]",
  "$substring(1)",
  "$string(1, 2, 3)",
];

async function official(expression: string): Promise<{ value?: unknown; code?: string }> {
  try {
    return { value: await officialJsonata(expression).evaluate(INPUT) };
  } catch (e) {
    return { code: (e as { code?: string }).code ?? "error" };
  }
}

function vendored(expression: string): { value?: unknown; code?: string } {
  try {
    return { value: jsonata(expression).evaluate(INPUT, {}) };
  } catch (e) {
    return { code: (e as { code?: string }).code ?? "error" };
  }
}

/** JSON equality that ignores jsonata's sequence flags. */
function normalize(r: { value?: unknown; code?: string }): unknown {
  return r.code !== undefined ? { code: r.code } : { value: JSON.stringify(r.value) };
}

describe("vendored synchronous jsonata", () => {
  it("evaluates synchronously", () => {
    const result = jsonata("$sum([1..10])").evaluate(undefined, {});
    expect(result).toBe(55);
  });

  it.each(EXPRESSIONS)("matches the published jsonata: %s", async (expression) => {
    expect(normalize(vendored(expression))).toEqual(normalize(await official(expression)));
  });

  it.each(ERRORS)("fails as the published jsonata does: %s", async (expression) => {
    const expected = await official(expression);
    expect(expected.code).toBeDefined();
    expect(normalize(vendored(expression))).toEqual(normalize(expected));
  });

  it("sorts thousands of items with a comparator (the merge is iterative)", () => {
    const items = Array.from({ length: 20_000 }, (_, i) => (i * 7919) % 20_000);
    const sorted = jsonata("$sort($, function($a, $b){ $a > $b })").evaluate(items, {}) as number[];
    expect(sorted).toHaveLength(20_000);
    expect(sorted.slice(0, 3)).toEqual([0, 1, 2]);
  });

  it("keeps $sort stable", async () => {
    const input = [
      { k: 1, n: "a" },
      { k: 0, n: "b" },
      { k: 1, n: "c" },
      { k: 0, n: "d" },
    ];
    const expression = "$sort($, function($l, $r){ $l.k > $r.k }).n";
    expect(jsonata(expression).evaluate(input, {})).toEqual(
      await officialJsonata(expression).evaluate(input),
    );
  });

  it("has no $eval", () => {
    expect(vendored("$eval('1 + 1')").code).toBe("T1006");
  });
});
