import { RE2JS } from "re2js";

/**
 * Regular expressions from definitions (JSONata's `/re/` literals, JSONPath's `=~`)
 * compiled for RE2 (the `re2js` port): matching time is linear in the text, so no
 * pattern can backtrack for minutes as JavaScript's RegExp does on `/(a|a)+$/`.
 *
 * RE2 syntax is JavaScript's except for what needs backtracking, which RE2 refuses:
 * backreferences (`\1`, `\k<name>`) and lookaround (`(?=`, `(?!`, `(?<=`, `(?<!`).
 * Other differences: `\s` is ASCII whitespace (JavaScript's also has U+00A0 and
 * other Unicode spaces); with the `m` flag only "\n" ends a line for `^` and `$`.
 * `.` keeps JavaScript's meaning (any character but "\n", "\r", U+2028, U+2029).
 */

/** The pattern compiled, or why Stepwise refuses it (a sentence naming the construct). */
export type Re2Compiled = { ok: true; re: RE2JS } | { ok: false; reason: string };

/** Compiles `source` (JavaScript syntax) with JavaScript flags (`i`, `m`, `s`; others are ignored). */
export function compileRe2(source: string, flags: string): Re2Compiled {
  const unsupported = backtrackingConstruct(source);
  if (unsupported !== undefined) {
    return {
      ok: false,
      reason:
        `The regular expression /${source}/ uses ${unsupported}, which Stepwise does not support: ` +
        "regular expressions run on RE2, in time linear in the text, without backreferences or lookaround.",
    };
  }
  let f = 0;
  if (flags.includes("i")) f |= RE2JS.CASE_INSENSITIVE;
  if (flags.includes("m")) f |= RE2JS.MULTILINE;
  if (flags.includes("s")) f |= RE2JS.DOTALL;
  try {
    const translated = RE2JS.translateRegExp(flags.includes("s") ? source : jsDot(source));
    return { ok: true, re: RE2JS.compile(translated, f) };
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    return {
      ok: false,
      reason: `The regular expression /${source}/ is not supported by Stepwise's regular expression engine (RE2 syntax): ${reason}`,
    };
  }
}

/**
 * The first construct of `source` that RE2 cannot run, described for a message, or
 * undefined. Escapes and character classes are skipped (`[(?=]` is three characters).
 */
export function backtrackingConstruct(source: string): string | undefined {
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (ch === "\\") {
      const next = source[i + 1] ?? "";
      if (/[1-9]/.test(next)) return `a backreference '\\${/^\d+/.exec(source.slice(i + 1))![0]}'`;
      if (next === "k" && source[i + 2] === "<") return "a named backreference '\\k<…>'";
      i += 2;
    } else if (ch === "[") {
      i = classEnd(source, i);
    } else if (ch === "(" && source[i + 1] === "?") {
      const head = source.slice(i, i + 4);
      if (head.startsWith("(?=")) return "a lookahead '(?='";
      if (head.startsWith("(?!")) return "a negative lookahead '(?!'";
      if (head.startsWith("(?<=")) return "a lookbehind '(?<='";
      if (head.startsWith("(?<!")) return "a negative lookbehind '(?<!'";
      i += 2;
    } else {
      i += 1;
    }
  }
  return undefined;
}

/**
 * The end of the character class opening at `open`: past the first unescaped `]`
 * (in JavaScript `[]` is an empty class and `[^]` any character).
 */
export function classEnd(source: string, open: number): number {
  let i = open + 1;
  while (i < source.length && source[i] !== "]") i += source[i] === "\\" ? 2 : 1;
  return Math.min(source.length, i + 1);
}

/** `.` outside classes as JavaScript means it; RE2's `.` excludes only "\n". */
function jsDot(source: string): string {
  let out = "";
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    if (ch === "\\") {
      out += source.slice(i, i + 2);
      i += 2;
    } else if (ch === "[") {
      const end = classEnd(source, i);
      out += source.slice(i, end);
      i = end;
    } else if (ch === ".") {
      out += "[^\\n\\r\\u2028\\u2029]";
      i += 1;
    } else {
      out += ch;
      i += 1;
    }
  }
  return out;
}
