import type { Json } from "../core/json.js";
import type { FilterExpr, FilterOperand, PathExpr, PathRoot, Segment } from "./ast.js";

/**
 * Parser for ASL JSONPath, following Jayway JsonPath's syntax (AWS Step
 * Functions, "Paths": https://docs.aws.amazon.com/step-functions/latest/dg/amazon-states-language-paths.html).
 * Roots: `$` (state input), `$$` (context object), `$name` (workflow variable).
 */
export class PathSyntaxError extends Error {
  constructor(
    readonly path: string,
    readonly position: number,
    detail: string,
  ) {
    super(`Invalid JSONPath '${path}': ${detail} (at position ${position})`);
    this.name = "PathSyntaxError";
  }
}

/** Path functions Jayway offers (`$.items.length()`); see evaluate.ts for their meaning. */
export const PATH_FUNCTIONS: ReadonlySet<string> = new Set([
  "length",
  "size",
  "min",
  "max",
  "avg",
  "stddev",
  "sum",
  "keys",
  "first",
  "last",
]);

/** Comparison operators of Jayway filters; word operators need a space around them. */
const SYMBOL_OPERATORS = ["==", "!=", "<=", ">=", "=~", "<", ">"] as const;
const WORD_OPERATORS = ["subsetof", "anyof", "noneof", "nin", "in", "size", "empty"] as const;

const VARIABLE_START = /[\p{L}_]/u;
const VARIABLE_PART = /[\p{L}\p{N}_]/u;

const cache = new Map<string, PathExpr>();
/** Bound the cache so that definitions with generated paths cannot grow it forever. */
const CACHE_LIMIT = 10_000;

/** Parses (and caches) a path; throws PathSyntaxError saying what is wrong. */
export function parsePath(text: string): PathExpr {
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const expr = new PathParser(text).parse();
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, expr);
  return expr;
}

/**
 * ASL spec, "Reference Paths": a path that can only identify a single node:
 * no `*`, `..`, filters, slices or unions. Used by ResultPath and the `*Path` fields.
 */
export function isReferencePath(text: string): boolean {
  try {
    return parsePath(text).reference;
  } catch (error) {
    if (error instanceof PathSyntaxError) return false;
    throw error;
  }
}

/** True when `text` parses as a path (any root). */
export function isValidPath(text: string): boolean {
  try {
    parsePath(text);
    return true;
  } catch (error) {
    if (error instanceof PathSyntaxError) return false;
    throw error;
  }
}

function isDefinite(segments: readonly Segment[]): boolean {
  return segments.every(
    (s, i) =>
      s.kind === "property" ||
      s.kind === "index" ||
      s.kind === "function" ||
      // Jayway: a trailing multi-property token merges into one object, "kinda definite".
      (s.kind === "properties" && i === segments.length - 1),
  );
}

class PathParser {
  private pos = 0;

  constructor(private readonly text: string) {}

  parse(): PathExpr {
    const text = this.text;
    // Jayway trims the path before compiling it.
    this.skipSpaces();
    if (this.peek() !== "$") this.fail("a path must start with '$'");
    this.pos++;
    let root: PathRoot;
    if (this.peek() === "$") {
      this.pos++;
      root = { kind: "context" };
    } else if (VARIABLE_START.test(this.peek())) {
      const start = this.pos;
      while (this.pos < text.length && VARIABLE_PART.test(this.peek())) this.pos++;
      root = { kind: "variable", name: text.slice(start, this.pos) };
    } else {
      root = { kind: "input" };
    }
    const segments = this.segments(false);
    this.skipSpaces();
    if (this.pos < text.length) this.fail(`unexpected character '${this.peek()}'`);
    const reference = segments.every((s) => s.kind === "property" || s.kind === "index");
    return { text, root, segments, definite: isDefinite(segments), reference };
  }

  // ---- segments ------------------------------------------------------------

  /** Reads `.a`, `[..]`, `..x` segments until something else comes. */
  private segments(inFilter: boolean): Segment[] {
    const out: Segment[] = [];
    for (;;) {
      const c = this.peek();
      if (c === ".") {
        if (this.peek(1) === ".") {
          this.pos += 2;
          out.push({ kind: "scan", target: this.scanTarget(inFilter) });
        } else {
          this.pos++;
          out.push(this.dotSegment(inFilter));
        }
      } else if (c === "[") {
        out.push(this.bracketSegment());
      } else {
        break;
      }
      const last = out[out.length - 1]!;
      if (last.kind === "function") {
        const next = this.peek();
        if (next === "." || next === "[") this.fail("a path function must be the last segment");
      }
    }
    return out;
  }

  private scanTarget(inFilter: boolean): Segment {
    const c = this.peek();
    if (c === "") this.fail("a path must not end with '..'");
    if (c === "[") return this.bracketSegment();
    if (c === "*") {
      this.pos++;
      return { kind: "wildcard" };
    }
    const name = this.propertyName(inFilter);
    if (this.peek() === "(") this.fail("a function cannot follow '..'");
    return { kind: "property", name };
  }

  private dotSegment(inFilter: boolean): Segment {
    const c = this.peek();
    if (c === "" || c === " ") this.fail("a path must not end with '.'");
    if (c === "*") {
      this.pos++;
      return { kind: "wildcard" };
    }
    if (c === "[") this.fail("'.' cannot be followed by '['");
    const name = this.propertyName(inFilter);
    if (this.peek() === "(") {
      this.pos++;
      this.skipSpaces();
      if (this.peek() !== ")") this.fail(`path function '${name}()' takes no arguments`);
      this.pos++;
      if (!PATH_FUNCTIONS.has(name)) this.fail(`unknown path function '${name}()'`);
      return { kind: "function", name };
    }
    return { kind: "property", name };
  }

  /** Dot notation name: Jayway reads up to '.', '[', '(' and refuses blanks. */
  private propertyName(inFilter: boolean): string {
    const start = this.pos;
    while (this.pos < this.text.length) {
      const c = this.text[this.pos]!;
      if (c === "." || c === "[" || c === "(") break;
      if (c === " ") {
        if (inFilter) break;
        this.fail("use bracket notation ['my prop'] for a property name with blanks");
      }
      if (inFilter && ")<>=!&|,".includes(c)) break;
      this.pos++;
    }
    if (this.pos === start) this.fail("expected a property name");
    return this.text.slice(start, this.pos);
  }

  private bracketSegment(): Segment {
    this.expect("[");
    this.skipSpaces();
    const c = this.peek();
    let segment: Segment;
    if (c === "*") {
      this.pos++;
      segment = { kind: "wildcard" };
    } else if (c === "?") {
      this.pos++;
      this.skipSpaces();
      this.expect("(");
      const predicate = this.orExpr();
      this.skipSpaces();
      this.expect(")");
      segment = { kind: "filter", predicate };
    } else if (c === "'" || c === '"') {
      const names = [this.quoted()];
      this.skipSpaces();
      while (this.peek() === ",") {
        this.pos++;
        this.skipSpaces();
        if (this.peek() !== "'" && this.peek() !== '"') this.fail("expected a quoted property name");
        names.push(this.quoted());
        this.skipSpaces();
      }
      segment = names.length === 1 ? { kind: "property", name: names[0]! } : { kind: "properties", names };
    } else if (c === "-" || c === ":" || isDigit(c)) {
      segment = this.indexOrSlice();
    } else if (c === "]") {
      this.fail("empty brackets");
    } else {
      this.fail(`unexpected character '${c}' in brackets`);
    }
    this.skipSpaces();
    this.expect("]");
    return segment;
  }

  private indexOrSlice(): Segment {
    const first = this.peek() === ":" ? undefined : this.integer();
    this.skipSpaces();
    if (this.peek() === ":") {
      this.pos++;
      this.skipSpaces();
      const end = this.peek() === "]" ? undefined : this.integer();
      this.skipSpaces();
      if (this.peek() === ":") this.fail("slices with a step are not supported");
      return { kind: "slice", start: first, end };
    }
    if (first === undefined) this.fail("expected an index");
    const indexes = [first];
    while (this.peek() === ",") {
      this.pos++;
      this.skipSpaces();
      indexes.push(this.integer());
      this.skipSpaces();
    }
    return indexes.length === 1 ? { kind: "index", index: first } : { kind: "indexes", indexes };
  }

  private integer(): number {
    const start = this.pos;
    if (this.peek() === "-") this.pos++;
    while (isDigit(this.peek())) this.pos++;
    const digits = this.text.slice(start, this.pos);
    if (digits === "" || digits === "-") this.fail("expected an integer");
    return Number(digits);
  }

  /** A quoted string with backslash escapes (Jayway unescapes them as Java does). */
  private quoted(): string {
    const quote = this.peek();
    this.pos++;
    let out = "";
    for (;;) {
      if (this.pos >= this.text.length) this.fail("unterminated string");
      const c = this.text[this.pos++]!;
      if (c === quote) return out;
      if (c === "\\") {
        const e = this.text[this.pos++];
        if (e === undefined) this.fail("unterminated string");
        out += ESCAPES[e] ?? e;
      } else {
        out += c;
      }
    }
  }

  // ---- filter predicates (Jayway FilterCompiler) -----------------------------

  private orExpr(): FilterExpr {
    let left = this.andExpr();
    for (;;) {
      this.skipSpaces();
      if (!this.text.startsWith("||", this.pos)) return left;
      this.pos += 2;
      left = { kind: "or", left, right: this.andExpr() };
    }
  }

  private andExpr(): FilterExpr {
    let left = this.unaryExpr();
    for (;;) {
      this.skipSpaces();
      if (!this.text.startsWith("&&", this.pos)) return left;
      this.pos += 2;
      left = { kind: "and", left, right: this.unaryExpr() };
    }
  }

  private unaryExpr(): FilterExpr {
    this.skipSpaces();
    if (this.peek() === "!" && this.peek(1) !== "=") {
      this.pos++;
      return { kind: "not", operand: this.unaryExpr() };
    }
    if (this.peek() === "(") {
      this.pos++;
      const inner = this.orExpr();
      this.skipSpaces();
      this.expect(")");
      return inner;
    }
    const left = this.operand();
    this.skipSpaces();
    const op = this.operator();
    if (op === undefined) {
      if (left.kind !== "path") this.fail("expected a comparison operator");
      return { kind: "exists", operand: left };
    }
    this.skipSpaces();
    return { kind: "compare", op, left, right: this.operand() };
  }

  private operator(): string | undefined {
    for (const op of SYMBOL_OPERATORS) {
      if (this.text.startsWith(op, this.pos)) {
        this.pos += op.length;
        return op;
      }
    }
    for (const op of WORD_OPERATORS) {
      const after = this.text[this.pos + op.length];
      if (this.text.startsWith(op, this.pos) && (after === " " || after === undefined)) {
        this.pos += op.length;
        return op;
      }
    }
    return undefined;
  }

  private operand(): FilterOperand {
    const c = this.peek();
    if (c === "@" || c === "$") {
      this.pos++;
      const segments = this.segments(true);
      return { kind: "path", relative: c === "@", segments, definite: isDefinite(segments) };
    }
    if (c === "/") return { kind: "regex", regex: this.regex() };
    return { kind: "literal", value: this.literal() };
  }

  private literal(): Json {
    this.skipSpaces();
    const c = this.peek();
    if (c === "'" || c === '"') return this.quoted();
    if (c === "-" || isDigit(c)) return this.number();
    if (c === "[") {
      this.pos++;
      const items: Json[] = [];
      this.skipSpaces();
      if (this.peek() === "]") {
        this.pos++;
        return items;
      }
      for (;;) {
        items.push(this.literal());
        this.skipSpaces();
        if (this.peek() === "]") {
          this.pos++;
          return items;
        }
        this.expect(",");
      }
    }
    if (c === "{") {
      this.pos++;
      const obj: { [key: string]: Json } = {};
      this.skipSpaces();
      if (this.peek() === "}") {
        this.pos++;
        return obj;
      }
      for (;;) {
        this.skipSpaces();
        if (this.peek() !== "'" && this.peek() !== '"') this.fail("expected a quoted key");
        const key = this.quoted();
        this.skipSpaces();
        this.expect(":");
        obj[key] = this.literal();
        this.skipSpaces();
        if (this.peek() === "}") {
          this.pos++;
          return obj;
        }
        this.expect(",");
      }
    }
    for (const [word, value] of KEYWORDS) {
      if (this.text.startsWith(word, this.pos)) {
        this.pos += word.length;
        return value;
      }
    }
    this.fail(c === "" ? "unexpected end of filter" : `unexpected character '${c}' in filter`);
  }

  private number(): number {
    const match = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.pos));
    if (match === null) this.fail("expected a number");
    this.pos += match[0].length;
    return Number(match[0]);
  }

  /** `/pattern/flags`; Jayway matches the whole string (Matcher.matches). */
  private regex(): RegExp {
    this.pos++;
    let source = "";
    for (;;) {
      if (this.pos >= this.text.length) this.fail("unterminated regular expression");
      const c = this.text[this.pos++]!;
      if (c === "/") break;
      if (c === "\\" && this.peek() === "/") {
        source += "/";
        this.pos++;
      } else {
        source += c;
      }
    }
    let flags = "";
    while (/[imsx]/.test(this.peek())) flags += this.text[this.pos++]!;
    try {
      return new RegExp(`^(?:${source})$`, flags.replace("x", ""));
    } catch {
      this.fail(`invalid regular expression /${source}/`);
    }
  }

  // ---- scanner helpers ------------------------------------------------------

  private peek(offset = 0): string {
    return this.text[this.pos + offset] ?? "";
  }

  private skipSpaces(): void {
    while (this.peek() === " " || this.peek() === "\t" || this.peek() === "\n") this.pos++;
  }

  private expect(c: string): void {
    if (this.peek() !== c) {
      this.fail(this.peek() === "" ? `expected '${c}' but the path ended` : `expected '${c}' but found '${this.peek()}'`);
    }
    this.pos++;
  }

  private fail(detail: string): never {
    throw new PathSyntaxError(this.text, this.pos, detail);
  }
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" };
const KEYWORDS: ReadonlyArray<readonly [string, Json]> = [
  ["true", true],
  ["false", false],
  ["null", null],
];

function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}
