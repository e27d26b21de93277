/**
 * Regular expressions are the one part of JSONata the step budget cannot stop: a
 * single `RegExp.exec` runs to completion, and `/(a+)+$/` on 30 characters
 * backtracks for minutes. jsonata builds every regex of an expression through its
 * `RegexEngine` option, so Stepwise hands it a RegExp that refuses, when it is
 * built, patterns with a repeated group that itself repeats (star height > 1, the
 * test of the `safe-regex` package). That catches the classic catastrophic forms;
 * overlapping alternations such as `(a|a)+` are not detected.
 */

/** The first nested repetition in `source`, e.g. `(a+)+`, or undefined. */
export function nestedRepetition(source: string): string | undefined {
  // One frame per open group: where it starts and whether something inside repeats.
  const frames: Array<{ start: number; repeats: boolean }> = [{ start: 0, repeats: false }];
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (ch === "\\") {
      i += 2;
      continue;
    }
    if (ch === "[") {
      i = skipClass(source, i);
      continue;
    }
    if (ch === "(") {
      frames.push({ start: i, repeats: false });
      i += 1;
      continue;
    }
    if (ch === ")" && frames.length > 1) {
      const group = frames.pop()!;
      const quantifier = quantifierAt(source, i + 1);
      const parent = frames[frames.length - 1]!;
      if (quantifier.repeats && group.repeats)
        return source.slice(group.start, i + 1 + quantifier.length);
      parent.repeats ||= group.repeats || quantifier.repeats;
      i += 1 + quantifier.length;
      continue;
    }
    const quantifier = quantifierAt(source, i);
    if (quantifier.length > 0) {
      frames[frames.length - 1]!.repeats ||= quantifier.repeats;
      i += quantifier.length;
      continue;
    }
    i += 1;
  }
  return undefined;
}

function skipClass(source: string, open: number): number {
  let i = open + 1;
  if (source[i] === "^") i += 1;
  if (source[i] === "]") i += 1;
  while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
  return i + 1;
}

/** The quantifier starting at `i` (with its lazy `?`); `{n}` and `?` do not repeat. */
function quantifierAt(source: string, i: number): { length: number; repeats: boolean } {
  const ch = source[i];
  let length = 0;
  let repeats = false;
  if (ch === "*" || ch === "+") {
    length = 1;
    repeats = true;
  } else if (ch === "?") {
    length = 1;
  } else if (ch === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i, i + 32));
    if (!m) return { length: 0, repeats: false };
    length = m[0].length;
    repeats = m[2] !== undefined && (m[3] === "" || Number(m[3]) > Number(m[1]));
  } else {
    return { length: 0, repeats: false };
  }
  if (source[i + length] === "?") length += 1;
  return { length, repeats };
}

/** jsonata's RegexEngine: a RegExp that refuses nested repetitions when it is built. */
export class GuardedRegExp extends RegExp {
  constructor(pattern: string | RegExp, flags?: string) {
    const source = typeof pattern === "string" ? pattern : pattern.source;
    const nested = nestedRepetition(source);
    if (nested !== undefined) {
      // A jsonata-shaped error (no code): reported as the expression's evaluation error.
      throw {
        message:
          `The regular expression /${source}/ repeats '${nested}', a repetition inside a repetition, ` +
          "which can take exponential time; Stepwise refuses it. Rewrite it without nested quantifiers.",
      };
    }
    super(pattern, flags);
  }
}
