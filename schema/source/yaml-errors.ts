import type { YAMLError } from "yaml";

/**
 * The one YAML syntax error worth reporting, placed where the text must change.
 *
 * The `yaml` package recovers from a syntax error and goes on, so one mistake comes
 * back as several errors, and not always where it is: a key indented one space
 * deeper than its siblings continues the plain scalar on the line above, and is
 * reported as "Nested mappings are not allowed in compact mappings" plus "Implicit
 * keys need to be on a single line", both at that scalar (the line above the
 * mistake). A key indented too little is reported at column 1 of its line. So the
 * first error is kept, as a compiler reports the first syntax error, and moved to
 * the line and column an author has to fix.
 */
export interface YamlSyntaxError {
  /** Where the text has to change (an offset into it). */
  offset: number;
  message: string;
}

/** Errors that are not syntax: reported each on their own, as before. */
const NOT_SYNTAX: ReadonlySet<string> = new Set(["DUPLICATE_KEY", "RESOURCE_EXHAUSTION"]);

export function isSyntaxError(error: YAMLError): boolean {
  return !NOT_SYNTAX.has(error.code);
}

export function firstSyntaxError(
  text: string,
  errors: readonly YAMLError[],
): YamlSyntaxError | undefined {
  let first: YAMLError | undefined;
  for (const error of errors) {
    if (isSyntaxError(error) && (first === undefined || error.pos[0] < first.pos[0])) {
      first = error;
    }
  }
  if (first === undefined) return undefined;
  if (first.code === "MULTIPLE_DOCS") {
    return {
      offset: first.pos[0],
      message: "The YAML holds more than one document ('---'); a definition is a single document",
    };
  }
  const start = first.pos[0];
  const continued = errors.find(
    (e) => e.code === "MULTILINE_IMPLICIT_KEY" && e.pos[0] <= start && start < e.pos[1],
  );
  const deeper = continued && continuedKey(text, continued);
  if (deeper) return deeper;
  const line = lineAt(text, start);
  const libraryMessage = firstLine(first.message);
  // An error in the indentation of a line: point at its first character.
  const inIndent = start < line.indentEnd && line.indentEnd < line.end;
  if (first.code === "BAD_INDENT" && /same column/.test(libraryMessage)) {
    const what = /sequence/i.test(libraryMessage) ? "items of its list" : "keys of its mapping";
    return {
      offset: inIndent ? line.indentEnd : start,
      message: `The YAML does not parse: this line is indented ${plural(line.indent, "space")}, unlike the other ${what} (${lowerFirst(libraryMessage)})`,
    };
  }
  if (inIndent) {
    return {
      offset: line.indentEnd,
      message: `The YAML does not parse: ${libraryMessage}; check the indentation of this line (${plural(line.indent, "space")})`,
    };
  }
  return { offset: start, message: `The YAML does not parse: ${libraryMessage}` };
}

/**
 * "Implicit keys need to be on a single line": the error spans from a plain scalar
 * to a key on a later line that was read as its continuation. When that key is
 * indented deeper than the line the scalar starts on, the indentation is the
 * mistake, and the key's line is the one to fix.
 */
function continuedKey(text: string, error: YAMLError): YamlSyntaxError | undefined {
  const [from, to] = error.pos;
  if (/["'[{]/.test(text.charAt(from))) return undefined; // not a plain scalar
  const keyLine = lineAt(text, Math.max(from, to - 1));
  const fromLine = lineAt(text, from);
  if (keyLine.start === fromLine.start || keyLine.indent <= fromLine.indent) return undefined;
  const key = text.slice(keyLine.indentEnd, to).trim();
  return {
    offset: keyLine.indentEnd,
    message: `The YAML does not parse: ${key === "" ? "this line" : `key '${key}'`} is indented deeper than the line above it, so it reads as part of that line's value; indent it like the keys beside it`,
  };
}

interface Line {
  start: number;
  /** Offset of the first character that is not a space. */
  indentEnd: number;
  end: number;
  indent: number;
}

function lineAt(text: string, offset: number): Line {
  const start = text.lastIndexOf("\n", offset - 1) + 1;
  const newline = text.indexOf("\n", offset);
  const end = newline < 0 ? text.length : newline;
  let indentEnd = start;
  while (indentEnd < end && text[indentEnd] === " ") indentEnd++;
  return { start, indentEnd, end, indent: indentEnd - start };
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

function lowerFirst(text: string): string {
  return text.charAt(0).toLowerCase() + text.slice(1);
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}
