/**
 * `StringMatches` patterns (ASL spec, "Choice Rules"; AWS "Choice workflow state"):
 * `*` matches any run of characters, including none; "the wildcard character is
 * escaped by using the standard \\" so `\*` is a literal star and `\\` a literal
 * backslash. "No characters other than `*` have any special meaning during
 * matching", so a backslash before any other character (or at the very end) is
 * an ordinary backslash.
 *
 * No RegExp is built: a pattern is its literal segments between stars, matched
 * greedily left to right, which is exact for `*`-only globs and linear in time.
 */

/** The literal runs of a pattern, split at its unescaped stars. */
export function wildcardSegments(pattern: string): string[] {
  const segments: string[] = [];
  let current = "";
  for (let i = 0; i < pattern.length; i++) {
    const ch = pattern[i]!;
    const next = pattern[i + 1];
    if (ch === "\\" && (next === "*" || next === "\\")) {
      current += next;
      i++;
    } else if (ch === "*") {
      segments.push(current);
      current = "";
    } else {
      current += ch;
    }
  }
  segments.push(current);
  return segments;
}

export function wildcardMatches(text: string, pattern: string): boolean {
  const segments = wildcardSegments(pattern);
  const first = segments[0]!;
  if (segments.length === 1) return text === first;
  const last = segments[segments.length - 1]!;
  if (text.length < first.length + last.length) return false;
  if (!text.startsWith(first) || !text.endsWith(last)) return false;
  // Middle segments, each placed at its leftmost position after the previous one.
  let from = first.length;
  const end = text.length - last.length;
  for (const segment of segments.slice(1, -1)) {
    const at = text.indexOf(segment, from);
    if (at < 0 || at + segment.length > end) return false;
    from = at + segment.length;
  }
  return true;
}
