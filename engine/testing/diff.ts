import { isJsonObject, jsonEqual, type Json } from "../core/json.js";

/** One place where two JSON values differ; `undefined` means "absent". */
export interface JsonDifference {
  path: string;
  expected: Json | undefined;
  actual: Json | undefined;
}

/**
 * Where `actual` departs from `expected`, as JSONPath-like paths ($.a.b[2]):
 * objects are compared key by key and arrays item by item, so a failing test
 * points at the field that changed instead of printing two whole documents.
 */
export function diffJson(
  expected: Json | undefined,
  actual: Json | undefined,
  path = "$",
): JsonDifference[] {
  if (isJsonObject(expected) && isJsonObject(actual)) {
    const keys = [...new Set([...Object.keys(expected), ...Object.keys(actual)])];
    return keys.flatMap((key) =>
      diffJson(
        Object.hasOwn(expected, key) ? expected[key] : undefined,
        Object.hasOwn(actual, key) ? actual[key] : undefined,
        `${path}${/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`}`,
      ),
    );
  }
  if (Array.isArray(expected) && Array.isArray(actual)) {
    const length = Math.max(expected.length, actual.length);
    return Array.from({ length }, (_, i) =>
      diffJson(
        i < expected.length ? expected[i] : undefined,
        i < actual.length ? actual[i] : undefined,
        `${path}[${i}]`,
      ),
    ).flat();
  }
  return sameJson(expected, actual) ? [] : [{ path, expected, actual }];
}

function sameJson(a: Json | undefined, b: Json | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return jsonEqual(a, b);
}

/** `path: expected → actual`, one line per difference, values shortened. */
export function formatDifferences(differences: JsonDifference[], limit = 20): string[] {
  const lines = differences
    .slice(0, limit)
    .map((d) => `${d.path}: ${show(d.expected)} → ${show(d.actual)}`);
  if (differences.length > limit) lines.push(`… and ${differences.length - limit} more`);
  return lines;
}

function show(value: Json | undefined): string {
  if (value === undefined) return "(absent)";
  const text = JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 120)}…` : text;
}
