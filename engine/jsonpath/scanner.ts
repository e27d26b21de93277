import type { Json } from "../core/json.js";

/** A path that does not parse; the message says what is wrong and where. */
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

/** The cursor and the token readers shared by the path and filter parsers. */
export class Scanner {
  pos = 0;
  /** Jayway trims the path before compiling it. */
  readonly text: string;

  constructor(readonly original: string) {
    this.text = original.trim();
  }

  integer(): number {
    const start = this.pos;
    if (this.peek() === "-") this.pos++;
    while (isDigit(this.peek())) this.pos++;
    const digits = this.text.slice(start, this.pos);
    if (digits === "" || digits === "-") this.fail("expected an integer");
    return Number(digits);
  }

  /** A quoted string with backslash escapes (Jayway unescapes them as Java does). */
  quoted(): string {
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

  number(): number {
    const match = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.pos));
    if (match === null) this.fail("expected a number");
    this.pos += match[0].length;
    return Number(match[0]);
  }

  peek(offset = 0): string {
    return this.text[this.pos + offset] ?? "";
  }

  skipSpaces(): void {
    while (this.peek() === " " || this.peek() === "\t" || this.peek() === "\n") this.pos++;
  }

  expect(c: string): void {
    if (this.peek() !== c) {
      this.fail(
        this.peek() === ""
          ? `expected '${c}' but the path ended`
          : `expected '${c}' but found '${this.peek()}'`,
      );
    }
    this.pos++;
  }

  fail(detail: string): never {
    throw new PathSyntaxError(this.original, this.pos, detail);
  }
}

const ESCAPES: Record<string, string> = { n: "\n", t: "\t", r: "\r", b: "\b", f: "\f" };

export const KEYWORDS: ReadonlyArray<readonly [string, Json]> = [
  ["true", true],
  ["false", false],
  ["null", null],
];

export function isDigit(c: string): boolean {
  return c >= "0" && c <= "9";
}
