import { classEnd } from "../core/re2.js";

/**
 * What one search of a linear-time engine may cost, so that the step meter can be
 * charged for it.
 *
 * RE2 answers one search in time linear in the text it reads, but `$match`,
 * `$replace` and `$split` search again from the end of every match, and a search
 * may read far past the match it returns: with `/a*b|a/` on a run of a's, each
 * search finds one `a` only after following `a*b` to the end of the run, so the
 * iteration reads the text quadratically often (20,000 a's: seconds; every
 * linear-time engine iterates this way, RE2, Go's regexp and Rust's regex alike).
 * The meter is therefore charged, per search, an upper bound of what it read:
 *
 * - in general the rest of the text, from where the search started to the end;
 * - for a pattern of the `boundedOverhang` family below, the text up to the end of
 *   the match plus that bound. What such a search reads further is text the next
 *   search reads before its own match, so the sum stays an upper bound as long as
 *   the first search of a text is charged the whole text (which covers the last
 *   one's). `$split(text, /\n/)` then costs in proportion to the text, not to the
 *   text times the number of lines.
 */

/**
 * What a search of `source` (JavaScript syntax) is charged past the end of its match,
 * or undefined when that is unbounded or the pattern is not of the family it knows.
 *
 * The family: a concatenation (groups allowed, no alternation, no quantified group)
 * in which only the last atom may repeat without bound (`*`, `+`, `{n,}`), followed
 * by nothing but assertions. A thread of such a pattern is either still in its
 * bounded prefix (it dies within that many characters) or in the final repetition,
 * where it matches wherever the trailing assertions hold: as the preferred (greedy)
 * thread it extends the match for as long as it lives, and an earlier-starting
 * thread alive at the match's end would have matched there first. Past the end of
 * its match a search follows only that preferred thread, through text where the
 * trailing assertions never hold (where the next search's threads die unmatched
 * too), and threads still in the prefix. So the next search's match starts no
 * earlier than the prefix's length before where this one stopped reading.
 * `\s+`, `,`, `\r?\n`, `[^,]*`, `(\d{4})-(\d{2})` are of the family; `a*b|a`,
 * `(ab)+`, `a+b` are not.
 */
export function boundedOverhang(source: string): number | undefined {
  let length = 0;
  let unbounded = false;
  let i = 0;
  while (i < source.length) {
    const ch = source[i]!;
    let atom: number; // the atom's end in source, or -1 for an assertion
    if (ch === "\\") {
      const next = source[i + 1];
      if (next === undefined) return undefined;
      if (next === "b" || next === "B") {
        i += 2;
        continue;
      }
      if (/[1-9k]/.test(next)) return undefined; // a backreference (refused anyway)
      atom = escapeEnd(source, i);
    } else if (ch === "[") {
      atom = classEnd(source, i);
    } else if (ch === "^" || ch === "$") {
      i += 1;
      continue;
    } else if (ch === "(") {
      const header = /^\(\?(?::|<[A-Za-z_$][\w$]*>)/.exec(source.slice(i, i + 64));
      if (source[i + 1] === "?" && header === null) return undefined; // lookaround
      i += header === null ? 1 : header[0].length;
      continue;
    } else if (ch === ")") {
      if (quantifier(source, i + 1) !== undefined) return undefined;
      i += 1;
      continue;
    } else if (ch === "|") {
      return undefined;
    } else {
      atom = i + 1;
    }
    // An atom after one that repeats without bound: the search may read past a match.
    if (unbounded) return undefined;
    const q = quantifier(source, atom);
    if (q === undefined) {
      length += 1;
      i = atom;
    } else {
      if (q.max === Infinity) unbounded = true;
      // The repeating atom adds one character (the look-ahead that ends it).
      length += q.max === Infinity ? 1 : Math.min(q.max, 1_000);
      i = atom + q.length;
    }
  }
  return length + 1;
}

/** The end of the escape starting at `i` (`\d`, `\x41`, `\u{1F600}`, `\p{L}`…). */
function escapeEnd(source: string, i: number): number {
  const next = source[i + 1];
  const braced = (from: number) => {
    const close = source.indexOf("}", from);
    return close === -1 ? source.length : close + 1;
  };
  if ((next === "u" || next === "p" || next === "P") && source[i + 2] === "{") return braced(i + 3);
  if (next === "u") return Math.min(source.length, i + 6);
  if (next === "x") return Math.min(source.length, i + 4);
  if (next === "c") return Math.min(source.length, i + 3);
  return i + 2;
}

/** The quantifier at `i` (with its lazy `?`), or undefined. */
function quantifier(source: string, i: number): { length: number; max: number } | undefined {
  const ch = source[i];
  let length: number;
  let max: number;
  if (ch === "*" || ch === "+") {
    length = 1;
    max = Infinity;
  } else if (ch === "?") {
    length = 1;
    max = 1;
  } else if (ch === "{") {
    const m = /^\{(\d+)(,(\d*))?\}/.exec(source.slice(i, i + 32));
    if (!m) return undefined;
    length = m[0].length;
    max = m[2] === undefined ? Number(m[1]) : m[3] === "" ? Infinity : Number(m[3]);
  } else {
    return undefined;
  }
  if (source[i + length] === "?") length += 1;
  return { length, max };
}
