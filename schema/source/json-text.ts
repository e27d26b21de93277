import type { Json, JsonObject } from "../../engine/core/json.js";
import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { child } from "../pointer.js";
import { LineIndex } from "./lines.js";
import { MAX_NESTING_DEPTH, MAX_SOURCE_DIAGNOSTICS } from "./limits.js";

/**
 * A JSON (RFC 8259) parser that remembers where every key and value starts, reports
 * duplicate keys (JSON.parse silently keeps the last one) and never recurses: the
 * nesting depth is checked before each `{`/`[` is entered, so a 10,000-deep document
 * is refused without touching the call stack.
 */

/**
 * Where each member of a container starts (character offsets into the text): the key
 * of an object member, the value of an array item.
 */
export type SpanIndex = WeakMap<object, Map<string, number> | number[]>;

export interface JsonTextResult {
  /** Present when the text parsed (possibly with duplicate-key diagnostics). */
  value?: Json;
  spans: SpanIndex;
  rootOffset: number;
  diagnostics: Diagnostic[];
  lines: LineIndex;
}

interface ObjectFrame {
  kind: "object";
  container: JsonObject;
  /** Key offsets, when spans are recorded. */
  members: Map<string, number> | undefined;
  /** The key whose value is being parsed (undefined before the first key). */
  key: string | undefined;
}

interface ArrayFrame {
  kind: "array";
  container: Json[];
  /** Item offsets, when spans are recorded. */
  members: number[] | undefined;
}

type Frame = ObjectFrame | ArrayFrame;

const SIMPLE_STRING = /"([^"\\\u0000-\u001f]*)"/y;
const NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const ESCAPE = /\\(?:["\\/bfnrt]|u[0-9a-fA-F]{4})/y;

class SyntaxProblem extends Error {
  constructor(
    readonly offset: number,
    message: string,
    readonly code:
      "INVALID_JSON_DESCRIPTION" | "TOO_DEEPLY_NESTED" | "NOT_JSON" = "INVALID_JSON_DESCRIPTION",
  ) {
    super(message);
  }
}

/**
 * Parses JSON text. Recording spans costs a Map per object, so callers parse without
 * them first and again with them only when a position is wanted (a diagnostic).
 */
export function parseJsonText(text: string, recordSpans = true): JsonTextResult {
  const lines = new LineIndex(text);
  const parser = new Parser(text, lines, recordSpans);
  const result: JsonTextResult = {
    spans: parser.spans,
    rootOffset: 0,
    diagnostics: parser.diagnostics,
    lines,
  };
  try {
    const { value, offset } = parser.parse();
    result.value = value;
    result.rootOffset = offset;
  } catch (error) {
    if (!(error instanceof SyntaxProblem)) throw error;
    const at = lines.position(error.offset);
    parser.diagnostics.push({
      ...diagnostic(error.code, error.message, parser.currentPointer()),
      ...at,
    });
  }
  return result;
}

class Parser {
  readonly spans: SpanIndex = new WeakMap();
  readonly diagnostics: Diagnostic[] = [];
  private pos = 0;
  private readonly stack: Frame[] = [];

  constructor(
    private readonly text: string,
    private readonly lines: LineIndex,
    private readonly recordSpans: boolean,
  ) {}

  /** The pointer of the value being parsed, from the open containers (computed only for diagnostics). */
  currentPointer(depth = this.stack.length): string {
    let pointer = "";
    for (const frame of this.stack.slice(0, depth)) {
      if (frame.kind === "array") pointer = child(pointer, frame.container.length);
      else if (frame.key !== undefined) pointer = child(pointer, frame.key);
    }
    return pointer;
  }

  parse(): { value: Json; offset: number } {
    this.skipSpace();
    const rootOffset = this.pos;
    let value = this.value();
    for (;;) {
      const frame = this.stack[this.stack.length - 1];
      if (!frame) break;
      // Attach the finished value to its container, then look for `,` or the closer.
      if (frame.kind === "object") setMember(frame.container, frame.key ?? "", value);
      else frame.container.push(value);
      this.skipSpace();
      const c = this.text[this.pos];
      const closer = frame.kind === "object" ? "}" : "]";
      if (c === ",") {
        this.pos++;
        this.skipSpace();
        if (frame.kind === "object") this.memberKey(frame);
        else frame.members?.push(this.pos);
        value = this.value();
      } else if (c === closer) {
        this.pos++;
        this.stack.pop();
        value = frame.container;
      } else {
        throw this.unexpected(`',' or '${closer}'`);
      }
    }
    this.skipSpace();
    if (this.pos < this.text.length) throw this.unexpected("the end of the text");
    return { value, offset: rootOffset };
  }

  /** Parses a scalar, or opens a container and returns its first member (iteratively). */
  private value(): Json {
    for (;;) {
      this.skipSpace();
      const c = this.text[this.pos];
      if (c === "{" || c === "[") {
        if (this.stack.length >= MAX_NESTING_DEPTH) {
          throw new SyntaxProblem(
            this.pos,
            `Objects and arrays nest deeper than ${MAX_NESTING_DEPTH} levels here; flatten the definition`,
            "TOO_DEEPLY_NESTED",
          );
        }
        this.pos++;
        this.skipSpace();
        if (c === "{") {
          const container: JsonObject = {};
          const members = this.recordSpans ? new Map<string, number>() : undefined;
          if (members) this.spans.set(container, members);
          if (this.text[this.pos] === "}") {
            this.pos++;
            return container;
          }
          const frame: ObjectFrame = { kind: "object", container, members, key: undefined };
          this.stack.push(frame);
          this.memberKey(frame);
        } else {
          const container: Json[] = [];
          const members = this.recordSpans ? [this.pos] : undefined;
          if (members) this.spans.set(container, members);
          if (this.text[this.pos] === "]") {
            this.pos++;
            return container;
          }
          this.stack.push({ kind: "array", container, members });
        }
        continue;
      }
      if (c === '"') return this.string();
      if (c === "-" || (c !== undefined && c >= "0" && c <= "9")) return this.number();
      for (const [word, literal] of LITERALS) {
        if (this.text.startsWith(word, this.pos)) {
          this.pos += word.length;
          return literal;
        }
      }
      throw this.unexpected("a JSON value (string, number, object, array, true, false or null)");
    }
  }

  /** Reads `"key" :` for an object frame and records where the key and value start. */
  private memberKey(frame: ObjectFrame): void {
    if (this.text[this.pos] !== '"') throw this.unexpected("a string key in double quotes");
    const keyOffset = this.pos;
    const key = this.string();
    this.skipSpace();
    if (this.text[this.pos] !== ":") throw this.unexpected("':' after the key");
    this.pos++;
    this.skipSpace();
    const duplicate =
      Object.prototype.hasOwnProperty.call(frame.container, key) || frame.members?.has(key);
    if (duplicate && this.diagnostics.length < MAX_SOURCE_DIAGNOSTICS) {
      const previous = frame.members?.get(key);
      const first = previous === undefined ? undefined : this.lines.position(previous);
      const where = first ? ` (first at line ${first.line}, column ${first.column})` : "";
      this.diagnostics.push({
        ...diagnostic(
          "DUPLICATE_KEY",
          `Key '${key}' appears twice in this object${where}; keep one`,
          child(this.currentPointer(this.stack.length - 1), key),
        ),
        ...this.lines.position(keyOffset),
      });
    }
    frame.key = key;
    frame.members?.set(key, keyOffset);
  }

  private string(): string {
    SIMPLE_STRING.lastIndex = this.pos;
    const simple = SIMPLE_STRING.exec(this.text);
    if (simple) {
      this.pos = SIMPLE_STRING.lastIndex;
      return simple[1]!;
    }
    const start = this.pos;
    let i = this.pos + 1;
    for (;;) {
      const c = this.text.charCodeAt(i);
      if (Number.isNaN(c))
        throw new SyntaxProblem(start, "Unterminated string: a closing '\"' is missing");
      if (c === 34) break;
      if (c < 0x20) {
        throw new SyntaxProblem(
          i,
          "Control characters must be escaped inside JSON strings (use \\n, \\t, \\u00XX)",
        );
      }
      if (c === 92) {
        ESCAPE.lastIndex = i;
        if (!ESCAPE.test(this.text)) {
          throw new SyntaxProblem(
            i,
            'Invalid escape sequence; JSON allows \\" \\\\ \\/ \\b \\f \\n \\r \\t and \\uXXXX',
          );
        }
        i = ESCAPE.lastIndex;
        continue;
      }
      i++;
    }
    this.pos = i + 1;
    return JSON.parse(this.text.slice(start, i + 1)) as string;
  }

  private number(): number {
    NUMBER.lastIndex = this.pos;
    const match = NUMBER.exec(this.text);
    if (!match) throw this.unexpected("a number");
    const value = Number(match[0]);
    if (!Number.isFinite(value)) {
      throw new SyntaxProblem(
        this.pos,
        `The number ${match[0]} is too large to represent`,
        "NOT_JSON",
      );
    }
    this.pos = NUMBER.lastIndex;
    return value;
  }

  private skipSpace(): void {
    const text = this.text;
    let i = this.pos;
    for (;;) {
      const c = text.charCodeAt(i);
      if (c === 32 || c === 10 || c === 13 || c === 9) i++;
      else break;
    }
    this.pos = i;
  }

  private unexpected(expected: string): SyntaxProblem {
    const c = this.text[this.pos];
    const found =
      c === undefined
        ? "end of text"
        : `token '${this.text.slice(this.pos, this.pos + 12).split(/[\s,:{}[\]"]/)[0] || c}'`;
    return new SyntaxProblem(this.pos, `Unexpected ${found}; expected ${expected}`);
  }
}

const LITERALS: readonly (readonly [string, Json])[] = [
  ["true", true],
  ["false", false],
  ["null", null],
];

/** `__proto__` must become an own property, as JSON.parse makes it, not a prototype. */
function setMember(target: JsonObject, key: string, value: Json): void {
  if (key === "__proto__") {
    Object.defineProperty(target, key, {
      value,
      writable: true,
      enumerable: true,
      configurable: true,
    });
  } else {
    target[key] = value;
  }
}
