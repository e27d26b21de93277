import type { RE2JS } from "re2js";
import type { Json } from "../core/json.js";
import { compileRe2 } from "../core/re2.js";
import type { FilterExpr, FilterOperand, Segment } from "./ast.js";
import { isDefinite } from "./ast.js";
import { isDigit, KEYWORDS, Scanner } from "./scanner.js";

/**
 * Jayway filter predicates, the inside of `[?( ... )]` (Jayway's
 * FilterCompiler): `||`, `&&`, `!`, parentheses, comparisons between `@`/`$`
 * paths, literals (numbers, quoted strings, true/false/null, JSON arrays and
 * objects) and `/regex/flags`.
 */

/** Comparison operators; word operators need a blank after them. */
const SYMBOL_OPERATORS = ["==", "!=", "<=", ">=", "=~", "<", ">"] as const;
/** What may start an unquoted right-hand side: a letter or '_' (digits and '-' are numbers). */
const BARE_WORD_START = /[\p{L}_]/u;
const WORD_OPERATORS = ["subsetof", "anyof", "noneof", "nin", "in", "size", "empty"] as const;

export abstract class FilterParser extends Scanner {
  /** The path parser's segment reader, for `@.a.b` and `$.x` operands. */
  protected abstract segments(inFilter: boolean): Segment[];

  /** `a || b`, `a && b`, `!a`, `(a)`, `left op right`, or a lone path (existence). */
  protected orExpr(): FilterExpr {
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
    return { kind: "compare", op, left, right: this.operand(true) };
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

  /** `bareWord`: the right-hand side of a comparison may be an unquoted string. */
  private operand(bareWord = false): FilterOperand {
    const c = this.peek();
    if (c === "@" || c === "$") {
      this.pos++;
      const segments = this.segments(true);
      return { kind: "path", relative: c === "@", segments, definite: isDefinite(segments) };
    }
    if (c === "/") return { kind: "regex", regex: this.regex() };
    if (bareWord && BARE_WORD_START.test(c) && !this.atKeyword()) {
      return { kind: "literal", value: this.bareWord() };
    }
    return { kind: "literal", value: this.literal() };
  }

  /**
   * `[?(@.Name==Receipt)]`: AWS accepts an unquoted right-hand side. Jayway 2.0's
   * Criteria.create kept such a value as the string it spells (only quoted text,
   * paths and /regex/ were converted), so it compares as 'Receipt'. The word runs to
   * the next blank, ')' or logical operator.
   */
  private bareWord(): string {
    const start = this.pos;
    while (this.pos < this.text.length && !/[\s)&|]/.test(this.peek())) this.pos++;
    return this.text.slice(start, this.pos);
  }

  /** true/false/null as whole words (so that `trueish` is a bare word, not `true` + junk). */
  private atKeyword(): boolean {
    return KEYWORDS.some(
      ([word]) => this.text.startsWith(word, this.pos) && !/[\w-]/.test(this.peek(word.length)),
    );
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

  /** `/pattern/flags`; Jayway matches the whole string (Matcher.matches). */
  private regex(): FilterRegex {
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
    const compiled = compileRe2(source, flags);
    if (!compiled.ok) this.fail(compiled.reason);
    return new FilterRegex(source, compiled.re);
  }
}

/**
 * `/pattern/flags` in a filter, run on RE2 (core/re2.ts): linear in the string, where
 * Jayway's java.util.regex, like JavaScript's RegExp, can backtrack for minutes.
 * Backreferences and lookaround are refused when the path is parsed.
 */
export class FilterRegex {
  constructor(
    readonly source: string,
    private readonly re: RE2JS,
  ) {}

  /** Whether the whole of `text` matches. */
  matches(text: string): boolean {
    return this.re.testExact(text);
  }
}
