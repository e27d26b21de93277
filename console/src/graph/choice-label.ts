/**
 * A short rendering of a Choice rule for an edge label (`$.x > 3`,
 * `$.kind == "card" && $.amount <= 100`). Labels are read at a glance, so
 * comparisons use symbols; the full rule stays in the definition.
 */

type Rule = Record<string, unknown>;

/** Comparison operators by their ASL name stem (ASL spec, "Choice Rules"). */
const COMPARISONS: Record<string, string> = {
  Equals: "==",
  LessThan: "<",
  GreaterThan: ">",
  LessThanEquals: "<=",
  GreaterThanEquals: ">=",
};

const TYPES = ["String", "Numeric", "Boolean", "Timestamp"] as const;

/** Type tests: `IsNull: true` reads "is null", `IsNull: false` "is not null". */
const TESTS: Record<string, string> = {
  IsNull: "null",
  IsPresent: "present",
  IsNumeric: "numeric",
  IsString: "string",
  IsBoolean: "boolean",
  IsTimestamp: "timestamp",
};

/** JSONata `{% … %}` shows its expression; anything else as JSON. */
function literal(value: unknown): string {
  if (typeof value === "string") {
    const jsonata = /^\{%([\s\S]*)%\}$/.exec(value);
    return jsonata ? jsonata[1]!.trim() : JSON.stringify(value);
  }
  return JSON.stringify(value);
}

function comparison(rule: Rule, variable: string): string | undefined {
  for (const key of Object.keys(rule)) {
    if (key in TESTS) {
      const value = rule[key];
      if (key === "IsPresent") return `${variable} is ${value === false ? "absent" : "present"}`;
      return `${variable} is ${value === false ? "not " : ""}${TESTS[key]}`;
    }
    if (key === "StringMatches") return `${variable} matches ${literal(rule[key])}`;
    for (const type of TYPES) {
      if (!key.startsWith(type)) continue;
      const rest = key.slice(type.length);
      const path = rest.endsWith("Path");
      const op = COMPARISONS[path ? rest.slice(0, -4) : rest];
      if (op === undefined) continue;
      const value = rule[key];
      return `${variable} ${op} ${path ? String(value) : literal(value)}`;
    }
  }
  return undefined;
}

/** Parentheses only around a combination inside another: `a && (b || c)`. */
function wrapped(rule: unknown): string {
  const text = choiceLabel(rule);
  return typeof rule === "object" && rule !== null && ("And" in rule || "Or" in rule)
    ? `(${text})`
    : text;
}

export function choiceLabel(rule: unknown): string {
  if (typeof rule !== "object" || rule === null || Array.isArray(rule)) return "?";
  const r = rule as Rule;
  if (r.Condition !== undefined) return literal(r.Condition);
  if (Array.isArray(r.And)) return r.And.map(wrapped).join(" && ");
  if (Array.isArray(r.Or)) return r.Or.map(wrapped).join(" || ");
  if (r.Not !== undefined) return `!${wrappedNot(r.Not)}`;
  const variable = typeof r.Variable === "string" ? r.Variable : "?";
  return comparison(r, variable) ?? variable;
}

function wrappedNot(rule: unknown): string {
  return `(${choiceLabel(rule)})`;
}

/** Edge labels stay short; the full text goes in a tooltip. */
export function shorten(text: string, max = 36): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
