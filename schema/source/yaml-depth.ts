/**
 * The `yaml` package composes documents recursively: a few hundred levels of
 * nesting exhaust the call stack, and a 10,000-deep flow mapping can even abort the
 * process. So before a YAML text reaches it, one linear pass estimates how deeply
 * the text nests and refuses it when the estimate passes the limit.
 *
 * The estimate errs on the high side: block nesting is the number of open
 * indentation levels, plus compact indicators on the line (`- - x`, `? a`), plus
 * one for a possible `key:`; flow nesting counts `[` and `{` outside quoted scalars
 * and comments. Block scalar bodies (`|`, `>`) are skipped, since their indentation
 * is text, not structure.
 */

const BLOCK_SCALAR_HEADER = /^[|>][0-9+-]*[ \t]*(?:#.*)?$/;

/** The offset where the estimated depth first exceeds `limit`, or -1 when it never does. */
export function findExcessiveNesting(text: string, limit: number): number {
  const indents: number[] = [];
  let flow = 0;
  let lineDepth = 0;
  let quote: '"' | "'" | undefined;
  /** Indentation of the line that opened a block scalar, or -1 outside one. */
  let blockScalarOwner = -1;
  let lineIndent = 0;
  let atLineStart = true;
  let i = 0;
  const n = text.length;

  while (i < n) {
    if (atLineStart && quote === undefined) {
      atLineStart = false;
      let indent = 0;
      while (text.charCodeAt(i + indent) === 32) indent++;
      const first = text[i + indent];
      const blank = first === undefined || first === "\n" || first === "\r";
      if (blockScalarOwner >= 0) {
        if (blank || indent > blockScalarOwner) {
          i = skipLine(text, i);
          atLineStart = true;
          continue;
        }
        blockScalarOwner = -1;
      }
      i += indent;
      if (blank || first === "#") {
        i = skipLine(text, i);
        atLineStart = true;
        continue;
      }
      if (flow === 0) {
        lineIndent = indent;
        while (indents.length > 0 && indents[indents.length - 1]! >= indent) indents.pop();
        indents.push(indent);
        lineDepth = indents.length + 1;
        // Compact nesting on one line: "- - - x", "? - a", "- a: - b".
        for (;;) {
          const c = text[i];
          const next = text[i + 1];
          const indicator = c === "-" || c === "?" || c === ":";
          if (
            !indicator ||
            (next !== " " && next !== "\t" && next !== "\n" && next !== "\r" && next !== undefined)
          ) {
            break;
          }
          lineDepth++;
          i++;
          while (text[i] === " " || text[i] === "\t") i++;
        }
        if (lineDepth > limit) return i;
      }
      continue;
    }

    const c = text[i]!;
    if (quote !== undefined) {
      if (c === "\n" || c === "\r") atLineStart = true;
      if (quote === '"') {
        if (c === "\\") {
          i += 2;
          continue;
        }
        if (c === '"') quote = undefined;
      } else if (c === "'") {
        if (text[i + 1] === "'") {
          i += 2;
          continue;
        }
        quote = undefined;
      }
      i++;
      continue;
    }

    const prev = text[i - 1];
    const tokenStart =
      prev === undefined ||
      prev === " " ||
      prev === "\t" ||
      prev === "\n" ||
      prev === "\r" ||
      (flow > 0 && (prev === "[" || prev === "{" || prev === "," || prev === ":"));

    switch (c) {
      case "\n":
      case "\r":
        atLineStart = true;
        i++;
        break;
      case "#":
        if (tokenStart) i = skipToLineEnd(text, i);
        else i++;
        break;
      case '"':
      case "'":
        if (tokenStart) quote = c;
        i++;
        break;
      case "[":
      case "{":
        if (flow > 0 || tokenStart) {
          flow++;
          if (lineDepth + flow > limit) return i;
        }
        i++;
        break;
      case "]":
      case "}":
        if (flow > 0) flow--;
        i++;
        break;
      case "|":
      case ">": {
        const end = skipToLineEnd(text, i);
        if (flow === 0 && tokenStart && BLOCK_SCALAR_HEADER.test(text.slice(i, end))) {
          blockScalarOwner = lineIndent;
          i = end;
        } else {
          i++;
        }
        break;
      }
      default:
        i++;
    }
  }
  return -1;
}

function skipToLineEnd(text: string, from: number): number {
  let i = from;
  while (i < text.length && text[i] !== "\n" && text[i] !== "\r") i++;
  return i;
}

function skipLine(text: string, from: number): number {
  let i = skipToLineEnd(text, from);
  if (text[i] === "\r" && text[i + 1] === "\n") i += 2;
  else if (i < text.length) i++;
  return i;
}
