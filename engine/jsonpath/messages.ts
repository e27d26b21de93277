import type { Json } from "../core/json.js";
import { isJsonObject } from "../core/json.js";
import { renderPath } from "./ast.js";
import type { PathScope } from "./evaluate.js";
import { rootValue } from "./evaluate.js";
import { parsePath } from "./parse.js";

/**
 * AWS's cause texts for paths that select nothing. The interpreter prefixes them
 * with "An error occurred while executing the state '<name>' (entered at the
 * event id #<n>). " as AWS does.
 */

/**
 * A payload template field (`"x.$": "$.a"`) or an intrinsic argument whose path
 * is absent, States.Runtime. Wording recorded from AWS / Step Functions Local:
 * "The JSONPath '$.nope.deep' specified for the field 'missing.$' could not be
 * found in the input '{"other":1}'".
 */
export function missingPathCause(path: string, scope: PathScope, field?: string): string {
  const document = documentOf(path, scope);
  const where = field === undefined ? "" : ` specified for the field '${field}'`;
  return `The JSONPath '${path}'${where} could not be found in the input '${JSON.stringify(document ?? null)}'`;
}

/**
 * InputPath/OutputPath/ItemsPath/`*Path` fields whose path is absent,
 * States.Runtime. Recorded in the conformance data:
 * "Invalid path '$.NoSuchInputPath' : No results for path: $['NoSuchInputPath']" and
 * "Invalid path '$.no.such.result.path' : Missing property in path $['no']".
 */
export function invalidPathCause(path: string, scope: PathScope): string {
  return `Invalid path '${path}' : ${missingPathReason(path, scope)}`;
}

/**
 * Jayway's PathNotFoundException message: an absent property before the last
 * token is "Missing property in path <up to it>"; otherwise the whole definite
 * path is reported with "No results for path: <path>".
 */
export function missingPathReason(path: string, scope: PathScope): string {
  const expr = parsePath(path);
  const whole = `No results for path: ${renderPath(expr.root, expr.segments)}`;
  let current = rootValue(expr.root, scope);
  if (current === undefined) return whole;
  const last = expr.segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const segment = expr.segments[i]!;
    if (segment.kind === "property") {
      if (!isJsonObject(current)) {
        return `Expected to find an object with property ['${segment.name}'] in path ${renderPath(expr.root, expr.segments, i)} but found '${javaTypeName(current)}'. This is not a json object according to the JsonProvider.`;
      }
      if (!Object.prototype.hasOwnProperty.call(current, segment.name)) {
        return i === last
          ? whole
          : `Missing property in path ${renderPath(expr.root, expr.segments, i + 1)}`;
      }
      current = current[segment.name]!;
    } else if (segment.kind === "index" && Array.isArray(current)) {
      const length: number = current.length;
      const index: number = segment.index < 0 ? length + segment.index : segment.index;
      if (index < 0 || index >= length) return whole;
      current = current[index]!;
    } else {
      return whole;
    }
  }
  return whole;
}

/** How Jayway names the value it found where an object was expected. */
function javaTypeName(value: Json): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "java.util.ArrayList";
  if (typeof value === "string") return "java.lang.String";
  if (typeof value === "boolean") return "java.lang.Boolean";
  if (typeof value === "number")
    return Number.isInteger(value) ? "java.lang.Integer" : "java.lang.Double";
  return "java.util.LinkedHashMap";
}

function documentOf(path: string, scope: PathScope): Json | undefined {
  try {
    return rootValue(parsePath(path).root, scope);
  } catch {
    return scope.input;
  }
}
