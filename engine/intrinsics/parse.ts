import type { Json } from "../core/json.js";
import { parsePath, PathSyntaxError } from "../jsonpath/parse.js";

/**
 * Parser for intrinsic function calls (AWS Step Functions, "Intrinsic functions
 * for JSONPath states"): `States.Name(arg, ...)` where an argument is a string
 * literal in single quotes, a number, `true`/`false`/`null`, a path (`$.x`,
 * `$$.x`, `$var`) or another call. AWS allows nesting up to 10 calls in a field.
 */
export const MAX_NESTING = 10;

export type IntrinsicArg =
  | {
      readonly kind: "literal";
      readonly value: Json;
      /**
       * For string literals: the text split at unescaped `{}`. Only a literal
       * can hold `\{`/`\}`, and States.Format must not treat those as placeholders.
       */
      readonly formatParts?: readonly string[];
    }
  | { readonly kind: "path"; readonly path: string }
  | IntrinsicCall;

export interface IntrinsicCall {
  readonly kind: "call";
  /** Full name, e.g. `States.Format`. */
  readonly name: string;
  readonly args: readonly IntrinsicArg[];
}

export class IntrinsicSyntaxError extends Error {
  constructor(
    readonly text: string,
    readonly position: number,
    detail: string,
  ) {
    super(`Invalid intrinsic function '${text}': ${detail} (at position ${position})`);
    this.name = "IntrinsicSyntaxError";
  }
}

/** Looks like `States.Name(...)`; what AWS treats as an intrinsic in a `.$` field. */
export function isIntrinsicCall(text: string): boolean {
  return /^\s*States\.[A-Za-z0-9_]*\s*\(/.test(text) && text.trimEnd().endsWith(")");
}

const cache = new Map<string, IntrinsicCall>();
const CACHE_LIMIT = 10_000;

/** Parses (and caches) a call; throws IntrinsicSyntaxError. Names and arity are checked by the caller. */
export function parseIntrinsic(text: string): IntrinsicCall {
  const cached = cache.get(text);
  if (cached !== undefined) return cached;
  const call = new IntrinsicParser(text).parse();
  if (cache.size >= CACHE_LIMIT) cache.clear();
  cache.set(text, call);
  return call;
}

class IntrinsicParser {
  private pos = 0;

  constructor(private readonly text: string) {}

  parse(): IntrinsicCall {
    this.skipSpaces();
    const call = this.call(1);
    this.skipSpaces();
    if (this.pos < this.text.length)
      this.fail(`unexpected '${this.text.slice(this.pos)}' after the call`);
    return call;
  }

  private call(depth: number): IntrinsicCall {
    if (depth > MAX_NESTING)
      this.fail(`intrinsic functions can be nested at most ${MAX_NESTING} deep`);
    const match = /^States\.[A-Za-z0-9_]+/.exec(this.text.slice(this.pos));
    if (match === null) this.fail("expected a function name such as 'States.Format'");
    const name = match[0];
    this.pos += name.length;
    this.skipSpaces();
    this.expect("(");
    const args: IntrinsicArg[] = [];
    this.skipSpaces();
    if (this.peek() === ")") {
      this.pos++;
      return { kind: "call", name, args };
    }
    for (;;) {
      this.skipSpaces();
      args.push(this.argument(depth));
      this.skipSpaces();
      if (this.peek() === ")") {
        this.pos++;
        return { kind: "call", name, args };
      }
      if (this.peek() !== ",")
        this.fail(
          this.peek() === "" ? "missing ')'" : `expected ',' or ')' but found '${this.peek()}'`,
        );
      this.pos++;
    }
  }

  private argument(depth: number): IntrinsicArg {
    const c = this.peek();
    if (c === "'") return this.stringLiteral();
    if (c === "$") return { kind: "path", path: this.path() };
    if (c === "-" || (c >= "0" && c <= "9")) return { kind: "literal", value: this.number() };
    if (this.text.startsWith("States.", this.pos)) return this.call(depth + 1);
    for (const [word, value] of KEYWORDS) {
      if (this.text.startsWith(word, this.pos) && !/[A-Za-z0-9_]/.test(this.peek(word.length))) {
        this.pos += word.length;
        return { kind: "literal", value };
      }
    }
    this.fail(c === "" ? "missing ')'" : `unexpected '${c}' where an argument was expected`);
  }

  /**
   * `'...'` with the escapes AWS documents: `\'`, `\{`, `\}` and `\\`. Other
   * backslashes are kept as written.
   */
  private stringLiteral(): IntrinsicArg {
    this.pos++;
    let value = "";
    let part = "";
    const parts: string[] = [];
    for (;;) {
      if (this.pos >= this.text.length) this.fail("unterminated string literal");
      const c = this.text[this.pos++]!;
      if (c === "'") break;
      if (c === "\\") {
        const e = this.text[this.pos];
        if (e === "'" || e === "{" || e === "}" || e === "\\") {
          this.pos++;
          value += e;
          part += e;
          continue;
        }
        value += c;
        part += c;
        continue;
      }
      if (c === "{" && this.peek() === "}") {
        this.pos++;
        value += "{}";
        parts.push(part);
        part = "";
        continue;
      }
      value += c;
      part += c;
    }
    parts.push(part);
    return { kind: "literal", value, formatParts: parts };
  }

  private number(): number {
    const match = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.pos));
    if (match === null) this.fail("expected a number");
    this.pos += match[0].length;
    return Number(match[0]);
  }

  /**
   * A path argument runs to the next `,` or `)` outside brackets, parentheses
   * and quotes (so `$['a,b']` and filters stay whole), then must parse as a path.
   */
  private path(): string {
    const start = this.pos;
    this.pos = pathArgumentEnd(this.text, start);
    const path = this.text.slice(start, this.pos).trimEnd();
    try {
      parsePath(path);
    } catch (error) {
      if (error instanceof PathSyntaxError)
        this.fail(`invalid path argument '${path}': ${error.message}`, start);
      throw error;
    }
    return path;
  }

  private peek(offset = 0): string {
    return this.text[this.pos + offset] ?? "";
  }

  private skipSpaces(): void {
    while (/\s/.test(this.peek())) this.pos++;
  }

  private expect(c: string): void {
    if (this.peek() !== c) this.fail(`expected '${c}'`);
    this.pos++;
  }

  private fail(detail: string, position = this.pos): never {
    throw new IntrinsicSyntaxError(this.text, position, detail);
  }
}

/**
 * Where a path argument that starts at `start` ends: at the next `,` or `)` outside
 * brackets, parentheses and quotes. A quoted name inside brackets keeps its JSONPath
 * escapes (`$['Test\\"Name']`, `$['it\\'s']`): they belong to the path, not to an
 * intrinsic string literal, so the validator's literal checks skip them too.
 */
export function pathArgumentEnd(text: string, start: number): number {
  let pos = start;
  let depth = 0;
  while (pos < text.length) {
    const c = text[pos]!;
    if (c === "'" || c === '"') {
      pos++;
      while (pos < text.length && text[pos] !== c) {
        if (text[pos] === "\\") pos++;
        pos++;
      }
    } else if (c === "[" || c === "(") {
      depth++;
    } else if (c === "]" || c === ")") {
      if (depth === 0) break;
      depth--;
    } else if (c === "," && depth === 0) {
      break;
    }
    pos++;
  }
  return pos;
}

const KEYWORDS: ReadonlyArray<readonly [string, Json]> = [
  ["true", true],
  ["false", false],
  ["null", null],
];
