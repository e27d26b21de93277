import type { Json, JsonObject } from "../core/json.js";
import { StatesError } from "../core/errors.js";
import type { RandomSource } from "../core/random.js";
import { compileIntrinsic, evaluateCall, isIntrinsicCall } from "../intrinsics/index.js";
import type { IntrinsicCall } from "../intrinsics/index.js";
import type { PathExpr, PathScope } from "../jsonpath/index.js";
import { missingPathCause, parsePath, PathSyntaxError, pathValue } from "../jsonpath/index.js";

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
  return evaluate(compile(template), scope, random, field);
}

/**
 * A template prepared once: keys split, paths parsed and intrinsics checked, so a
 * transition only evaluates. Problems found while preparing are kept and raised
 * when the field is evaluated, exactly where the uncompiled walk raised them.
 */
type Compiled =
  | { readonly kind: "literal"; readonly value: Json }
  | { readonly kind: "array"; readonly items: readonly Compiled[] }
  | { readonly kind: "object"; readonly entries: readonly Entry[] };

interface Entry {
  /** The output key (without `.$`). */
  readonly key: string;
  readonly value: Compiled | Dynamic;
}

type Dynamic =
  | { readonly kind: "path"; readonly key: string; readonly text: string; readonly expr: PathExpr }
  | { readonly kind: "intrinsic"; readonly key: string; readonly call: IntrinsicCall }
  /** A `.$` field that cannot be evaluated: the error it raises. */
  | {
      readonly kind: "invalid";
      readonly key: string;
      readonly error: string;
      readonly cause?: string;
    };

/**
 * Templates are parts of a definition, which nothing mutates once compiled into a
 * program: the prepared form is kept per template object, for as long as it lives.
 */
const compiled = new WeakMap<object, Compiled>();

function compile(template: Json): Compiled {
  if (template === null || typeof template !== "object")
    return { kind: "literal", value: template };
  let c = compiled.get(template);
  if (c === undefined) {
    c = Array.isArray(template)
      ? { kind: "array", items: template.map(compile) }
      : { kind: "object", entries: Object.keys(template).map((k) => entry(k, template[k]!)) };
    compiled.set(template, c);
  }
  return c;
}

function entry(key: string, value: Json): Entry {
  if (!key.endsWith(".$")) return { key, value: compile(value) };
  return { key: key.slice(0, -2), value: compileDynamic(key, value) };
}

function compileDynamic(key: string, value: Json): Dynamic {
  if (typeof value === "string") {
    if (isIntrinsicCall(value)) {
      try {
        return { kind: "intrinsic", key, call: compileIntrinsic(value) };
      } catch (error) {
        if (error instanceof StatesError)
          return { kind: "invalid", key, error: error.error, cause: error.cause };
        throw error;
      }
    }
    if (value.startsWith("$")) {
      try {
        return { kind: "path", key, text: value, expr: parsePath(value) };
      } catch (error) {
        if (error instanceof PathSyntaxError)
          return { kind: "invalid", key, error: "States.Runtime", cause: error.message };
        throw error;
      }
    }
  }
  // The validator refuses these definitions; the cause (AWS's wording) names the field.
  return { kind: "invalid", key, error: "States.Runtime" };
}

function evaluate(c: Compiled, scope: PathScope, random: RandomSource, field: string): Json {
  switch (c.kind) {
    case "literal":
      return c.value;
    case "array":
      return c.items.map((item) => evaluate(item, scope, random, field));
    case "object": {
      const out: JsonObject = {};
      for (const { key, value } of c.entries) {
        const v =
          value.kind === "literal" || value.kind === "array" || value.kind === "object"
            ? evaluate(value, scope, random, field)
            : evaluateDynamic(value, scope, random, field);
        define(out, key, v);
      }
      return out;
    }
  }
}

function evaluateDynamic(d: Dynamic, scope: PathScope, random: RandomSource, field: string): Json {
  switch (d.kind) {
    case "intrinsic":
      return evaluateCall(d.call, scope, random, d.key);
    case "path": {
      const value = pathValue(d.expr, scope);
      if (value === undefined)
        throw new StatesError("States.Runtime", missingPathCause(d.text, scope, d.key));
      return value;
    }
    case "invalid":
      throw new StatesError(
        d.error,
        d.cause ??
          `The value for the field '${d.key}' in ${field} must be a valid JSONPath or a valid intrinsic function call`,
      );
  }
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
