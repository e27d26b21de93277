import type { Json, JsonObject } from "../core/json.js";
import { isJsonObject } from "../core/json.js";
import { StatesError } from "../core/errors.js";
import type { RandomSource } from "../core/random.js";
import { evaluateIntrinsic, isIntrinsicCall } from "../intrinsics/index.js";
import type { PathScope } from "../jsonpath/index.js";
import { missingPathCause, PathSyntaxError, readPath } from "../jsonpath/index.js";

/**
 * Payload templates (ASL spec, "Payload Template"; used by Parameters,
 * ItemSelector, ResultSelector, Assign and friends under JSONPath): objects and
 * arrays are walked recursively; a key ending in `.$` takes a path (`$...`,
 * `$$...`, `$name...`) or an intrinsic call, and loses the suffix in the
 * output; every other value is copied as written.
 *
 * A path that selects nothing fails with States.Runtime and AWS's wording
 * ("The JSONPath '$.x' specified for the field 'x.$' could not be found in the
 * input '{...}'"); a bad intrinsic fails with States.IntrinsicFailure. Values
 * read from the input are shared, not copied: the engine never mutates JSON.
 * `field` names the template (Parameters, ResultSelector, ...) for messages.
 */
export function evaluatePayloadTemplate(
  template: Json,
  scope: PathScope,
  random: RandomSource,
  field: string,
): Json {
  if (Array.isArray(template))
    return template.map((item) => evaluatePayloadTemplate(item, scope, random, field));
  if (!isJsonObject(template)) return template;
  const out: JsonObject = {};
  for (const key of Object.keys(template)) {
    const value = template[key]!;
    if (key.endsWith(".$")) {
      define(out, key.slice(0, -2), evaluateDynamic(key, value, scope, random, field));
    } else {
      define(out, key, evaluatePayloadTemplate(value, scope, random, field));
    }
  }
  return out;
}

function evaluateDynamic(
  key: string,
  value: Json,
  scope: PathScope,
  random: RandomSource,
  field: string,
): Json {
  if (typeof value === "string") {
    if (isIntrinsicCall(value)) return evaluateIntrinsic(value, scope, random, key);
    if (value.startsWith("$")) {
      let result;
      try {
        result = readPath(value, scope);
      } catch (error) {
        if (error instanceof PathSyntaxError)
          throw new StatesError("States.Runtime", error.message);
        throw error;
      }
      if (!result.found)
        throw new StatesError("States.Runtime", missingPathCause(value, scope, key));
      return result.value;
    }
  }
  // The validator refuses these definitions; AWS's wording for them.
  throw new StatesError(
    "States.Runtime",
    `The value for the field '${key}' in ${field} must be a valid JSONPath or a valid intrinsic function call`,
  );
}

/** Plain assignment, except that a "__proto__" key must become an own data property. */
function define(obj: JsonObject, key: string, value: Json): void {
  if (key === "__proto__") {
    Object.defineProperty(obj, key, {
      value,
      enumerable: true,
      writable: true,
      configurable: true,
    });
  } else {
    obj[key] = value;
  }
}
