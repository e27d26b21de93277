/** JSON pointers (RFC 6901): how diagnostics name a place in a definition. */

export function escapeSegment(segment: string | number): string {
  if (typeof segment === "number") return String(segment);
  // Most keys need no escaping; skip the regular expressions for them (hot path).
  if (!segment.includes("~") && !segment.includes("/")) return segment;
  return segment.replace(/~/g, "~0").replace(/\//g, "~1");
}

/** Appends segments to a pointer: child("/States", "A/B") is "/States/A~1B". */
export function child(pointer: string, ...segments: (string | number)[]): string {
  let out = pointer;
  for (const segment of segments) out += "/" + escapeSegment(segment);
  return out;
}

/** The unescaped segments of a pointer; "" has none. */
export function segmentsOf(pointer: string): string[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"));
}
