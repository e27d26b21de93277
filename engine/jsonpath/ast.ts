import type { Json } from "../core/json.js";
import type { FilterRegex } from "./parse-filter.js";

/**
 * The parsed form of an ASL JSONPath. AWS Step Functions evaluates paths with
 * Jayway JsonPath (https://github.com/json-path/JsonPath), extended with `$$`
 * (the context object) and `$name` (workflow variables, "Assign"). The shapes
 * below mirror Jayway's path tokens so that evaluation can follow its rules.
 */
export type PathRoot =
  | { readonly kind: "input" }
  | { readonly kind: "context" }
  | { readonly kind: "variable"; readonly name: string };

export type Segment =
  /** `.name` or `['name']` */
  | { readonly kind: "property"; readonly name: string }
  /** `['a','b']`: Jayway merges these into one object when they are the last token. */
  | { readonly kind: "properties"; readonly names: readonly string[] }
  /** `[0]`, `[-1]` */
  | { readonly kind: "index"; readonly index: number }
  /** `[0,1]` */
  | { readonly kind: "indexes"; readonly indexes: readonly number[] }
  /** `.*`, `[*]` */
  | { readonly kind: "wildcard" }
  /** `[1:3]`, `[:2]`, `[-2:]` (Jayway has no step) */
  | { readonly kind: "slice"; readonly start: number | undefined; readonly end: number | undefined }
  /** `[?(<predicate>)]` */
  | { readonly kind: "filter"; readonly predicate: FilterExpr }
  /** `..<target>`: `target` applied to every node, document order (pre-order). */
  | { readonly kind: "scan"; readonly target: Segment }
  /** `.length()` and friends (Jayway path functions), always last. */
  | { readonly kind: "function"; readonly name: string };

export type FilterOperand =
  | { readonly kind: "literal"; readonly value: Json }
  | { readonly kind: "regex"; readonly regex: FilterRegex }
  /** `@...` (relative to the filtered item) or `$...` (the document root). */
  | {
      readonly kind: "path";
      readonly relative: boolean;
      readonly segments: readonly Segment[];
      readonly definite: boolean;
    };

export type FilterExpr =
  | { readonly kind: "and" | "or"; readonly left: FilterExpr; readonly right: FilterExpr }
  | { readonly kind: "not"; readonly operand: FilterExpr }
  /** `[?(@.x)]`: the path exists. */
  | { readonly kind: "exists"; readonly operand: FilterOperand }
  | {
      readonly kind: "compare";
      readonly op: string;
      readonly left: FilterOperand;
      readonly right: FilterOperand;
    };

export interface PathExpr {
  /** The text as written. */
  readonly text: string;
  readonly root: PathRoot;
  readonly segments: readonly Segment[];
  /** Jayway "definite": a single node (or a leaf merge of named properties). */
  readonly definite: boolean;
  /** ASL Reference Path: only `.name`, `['name']` and `[n]` segments. */
  readonly reference: boolean;
}

/** Jayway's normalized rendering of a segment, used in AWS's error causes: `['a']`, `[0]`. */
export function renderSegment(segment: Segment): string {
  switch (segment.kind) {
    case "property":
      return `['${segment.name}']`;
    case "properties":
      return `[${segment.names.map((n) => `'${n}'`).join(",")}]`;
    case "index":
      return `[${segment.index}]`;
    case "indexes":
      return `[${segment.indexes.join(",")}]`;
    case "wildcard":
      return "[*]";
    case "slice":
      return `[${segment.start ?? ""}:${segment.end ?? ""}]`;
    case "filter":
      return "[?]";
    case "scan":
      return `..${renderSegment(segment.target)}`;
    case "function":
      return `.${segment.name}()`;
  }
}

/** `$['a']['b'][0]`, as Jayway prints paths in PathNotFoundException messages. */
export function renderPath(
  root: PathRoot,
  segments: readonly Segment[],
  count = segments.length,
): string {
  let out = root.kind === "variable" ? `$${root.name}` : "$";
  for (let i = 0; i < count; i++) out += renderSegment(segments[i]!);
  return out;
}

/**
 * Jayway's "definite" path: only single properties, indexes and functions, or
 * a multi-property token at the end (merged into one object, "kinda definite").
 */
export function isDefinite(segments: readonly Segment[]): boolean {
  return segments.every(
    (s, i) =>
      s.kind === "property" ||
      s.kind === "index" ||
      s.kind === "function" ||
      (s.kind === "properties" && i === segments.length - 1),
  );
}
