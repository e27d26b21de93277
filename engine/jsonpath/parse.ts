import type { PathExpr, PathRoot, Segment } from "./ast.js";
import { isDefinite } from "./ast.js";
import { FilterParser } from "./parse-filter.js";
import { isDigit, PathSyntaxError } from "./scanner.js";

export { PathSyntaxError } from "./scanner.js";

/**
 * Parser for ASL JSONPath, following Jayway JsonPath's syntax (AWS Step
 * Functions, "Paths": https://docs.aws.amazon.com/step-functions/latest/dg/amazon-states-language-paths.html).
 * Roots: `$` (state input), `$$` (context object), `$name` (workflow variable).
 */

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

class PathParser extends FilterParser {
  parse(): PathExpr {
    const text = this.text;
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
    return { text: this.original, root, segments, definite: isDefinite(segments), reference };
  }

  // ---- segments ------------------------------------------------------------

  /** Reads `.a`, `[..]`, `..x` segments until something else comes. */
  protected segments(inFilter: boolean): Segment[] {
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
    // Jayway's readDotToken skips the '.' and reads whatever token follows, so
    // `$.[0]`, `$.items.[*]` and `$.[?(@.x > 0)]` mean `$[0]`, `$.items[*]`, `$[?(@.x > 0)]`.
    if (c === "[") return this.bracketSegment();
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
        if (this.peek() !== "'" && this.peek() !== '"')
          this.fail("expected a quoted property name");
        names.push(this.quoted());
        this.skipSpaces();
      }
      segment =
        names.length === 1 ? { kind: "property", name: names[0]! } : { kind: "properties", names };
    } else if (c === "-" || c === ":" || isDigit(c)) {
      segment = this.indexOrSlice();
    } else if (c === "]") {
      this.fail("empty brackets");
    } else if (c === "") {
      this.fail("expected ']' but the path ended");
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
}
