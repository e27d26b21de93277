import type { Json, JsonObject } from "../core/json.js";
import { isJsonObject } from "../core/json.js";
import { StatesError } from "../core/errors.js";
import type { Segment } from "./ast.js";
import { parsePath, PathSyntaxError } from "./parse.js";

/**
 * ResultPath (ASL spec, "ResultPath"; AWS, "Specifying state output using
 * ResultPath"): place `value` into a copy of `target` at a Reference Path.
 * `$` replaces the whole input; missing objects along the way are created; a
 * step into something that is not an object (or an index outside an array)
 * fails with States.ResultPathMatchFailure. The target is never mutated: only
 * the objects on the written path are copied, the rest is shared.
 */
export function writeReferencePath(target: Json, path: string, value: Json): Json {
  let segments: readonly Segment[];
  try {
    const expr = parsePath(path);
    if (expr.root.kind !== "input" || !expr.reference) throw matchFailure(path, target);
    segments = expr.segments;
  } catch (error) {
    if (error instanceof PathSyntaxError) throw matchFailure(path, target);
    throw error;
  }
  return write(target, segments, 0, value, path, target);
}

function write(
  node: Json,
  segments: readonly Segment[],
  i: number,
  value: Json,
  path: string,
  target: Json,
): Json {
  const segment = segments[i];
  if (segment === undefined) return value;
  if (segment.kind === "property") {
    if (!isJsonObject(node)) throw matchFailure(path, target);
    const child: Json = Object.prototype.hasOwnProperty.call(node, segment.name)
      ? node[segment.name]!
      : {};
    const copy: JsonObject = { ...node };
    const written = write(child, segments, i + 1, value, path, target);
    if (segment.name === "__proto__") {
      // A "__proto__" key must stay plain data, not replace the prototype.
      Object.defineProperty(copy, segment.name, {
        value: written,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    } else {
      copy[segment.name] = written;
    }
    return copy;
  }
  if (segment.kind === "index" && Array.isArray(node)) {
    const index = segment.index < 0 ? node.length + segment.index : segment.index;
    if (index < 0 || index >= node.length) throw matchFailure(path, target);
    const copy = node.slice();
    copy[index] = write(node[index]!, segments, i + 1, value, path, target);
    return copy;
  }
  throw matchFailure(path, target);
}

/** AWS: "Unable to apply ReferencePath $.a.b to input \"text\"". */
function matchFailure(path: string, target: Json): StatesError {
  return new StatesError(
    "States.ResultPathMatchFailure",
    `Unable to apply ReferencePath ${path} to input ${JSON.stringify(target)}`,
  );
}
