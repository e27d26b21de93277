import type { ErrorObject } from "ajv";
import { aslSchema } from "./asl/bundle.js";
import type { SchemaObject } from "./asl/common.js";
import { closest, fieldLabel, ownerLabel, showValue } from "./describe.js";
import { diagnostic, type Diagnostic } from "./diagnostic.js";
import { child, segmentsOf } from "./pointer.js";

/**
 * Turns ajv's errors into diagnostics that name the field and say what would be
 * right. Union fields (a number or a JSONata expression) fail in every branch; those
 * branch errors are folded into one message built from the union's `description`.
 * `if` errors of the Type dispatch carry no information and are dropped.
 */
export function schemaDiagnostics(errors: readonly ErrorObject[]): Diagnostic[] {
  const folded = new Set<ErrorObject>();
  errors.forEach((error, index) => {
    if (error.keyword !== "anyOf" && error.keyword !== "oneOf") return;
    const branches = new Set((error.schema as SchemaObject[]).map(resolve));
    for (let j = index - 1; j >= 0; j--) {
      const previous = errors[j]!;
      if (
        previous.instancePath !== error.instancePath ||
        !branches.has(previous.parentSchema as SchemaObject)
      )
        break;
      folded.add(previous);
    }
  });

  const out: Diagnostic[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    if (folded.has(error) || error.keyword === "if") continue;
    const d = toDiagnostic(error);
    const key = `${d.path}\u0000${d.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(d);
  }
  return out;
}

function toDiagnostic(error: ErrorObject): Diagnostic {
  const path = error.instancePath;
  const description = (error.parentSchema as SchemaObject | undefined)?.description;
  const expected = typeof description === "string" ? description : undefined;
  const got = ` (got ${showValue(error.data)})`;
  const params = error.params as Record<string, unknown>;

  switch (error.keyword) {
    case "required": {
      const field = String(params.missingProperty);
      return diagnostic(
        "SCHEMA_VALIDATION_FAILED",
        `The field '${field}' is required in ${containerLabel(path)}${REQUIRED_HINTS[field] ?? ""}`,
        path,
      );
    }
    case "additionalProperties":
    case "unevaluatedProperties": {
      const field = String(params.additionalProperty ?? params.unevaluatedProperty);
      return diagnostic(
        "SCHEMA_VALIDATION_FAILED",
        unknownFieldMessage(field, path, error),
        child(path, field),
      );
    }
    case "not": {
      const pair = ((error.schema as SchemaObject).required ?? []) as string[];
      const [a = "?", b = "?"] = pair;
      return diagnostic(
        "MUTUALLY_EXCLUSIVE_FIELDS",
        `${capital(ownerLabel(path))} sets both ${a} and ${b}; they are mutually exclusive, keep one`,
        child(path, b),
      );
    }
    case "anyOf":
    case "oneOf": {
      const isObjectRule =
        typeof error.data === "object" && error.data !== null && !Array.isArray(error.data);
      if (isObjectRule && expected && !isValueUnion(error)) {
        return diagnostic(
          "SCHEMA_VALIDATION_FAILED",
          `${capital(containerLabel(path))} must have ${expected}`,
          path,
        );
      }
      return diagnostic(
        "SCHEMA_VALIDATION_FAILED",
        `${fieldLabel(path)} must be ${expected ?? "valid"}${got}`,
        path,
      );
    }
    case "format":
      return diagnostic(
        "INVALID_TIMESTAMP",
        `${fieldLabel(path)} must be ${expected ?? "an RFC 3339 timestamp"}${got}; String does not match RFC3339 timestamp`,
        path,
      );
    case "enum":
    case "const": {
      const allowed = (params.allowedValues as unknown[] | undefined) ?? [params.allowedValue];
      const wanted = expected ?? `one of ${allowed.map((v) => showValue(v)).join(", ")}`;
      return diagnostic(
        "SCHEMA_VALIDATION_FAILED",
        `${fieldLabel(path)} must be ${wanted}${got}`,
        path,
      );
    }
    case "type": {
      const ruleUnion = isObjectRuleSchema(error.parentSchema as SchemaObject | undefined);
      const wanted = (!ruleUnion && expected) || article(String(params.type));
      return diagnostic(
        "SCHEMA_VALIDATION_FAILED",
        `${fieldLabel(path)} must be ${wanted}${got}`,
        path,
      );
    }
    default: {
      const wanted = expected ? `must be ${expected}` : (error.message ?? "is invalid");
      return diagnostic("SCHEMA_VALIDATION_FAILED", `${fieldLabel(path)} ${wanted}${got}`, path);
    }
  }
}

/** A schema whose anyOf/oneOf only says which fields an object needs. */
function isObjectRuleSchema(schema: SchemaObject | undefined): boolean {
  const union = (schema?.anyOf ?? schema?.oneOf) as SchemaObject[] | undefined;
  return union !== undefined && union.every((branch) => "required" in branch);
}

/** A union of value shapes (number or expression) rather than a rule about which fields an object has. */
function isValueUnion(error: ErrorObject): boolean {
  return (error.schema as SchemaObject[]).some((branch) => !("required" in branch));
}

const REQUIRED_HINTS: Record<string, string> = {
  StartAt: " (the name of the state to run first)",
  States: " (an object of named states)",
  Type: " (one of Pass, Task, Choice, Wait, Succeed, Fail, Parallel or Map)",
  Resource: " (the URI of the task to run, such as a Lambda function ARN)",
  Next: " (the name of the state to go to)",
  ErrorEquals: ' (a non-empty array of error names such as ["States.ALL"])',
  Choices: " (a non-empty array of Choice rules)",
  Branches: " (a non-empty array of branches, each with StartAt and States)",
};

/** Hints for fields in the wrong kind of state, where a spelling suggestion would not help. */
const MISPLACED_HINTS: Record<string, Record<string, string>> = {
  Choice: {
    Next: "a Choice state moves on through the Next of its Choices and its Default",
    End: "a Choice state cannot end the execution; point a rule or Default at a Succeed state",
  },
  Succeed: { Next: "Succeed is a terminal state", End: "Succeed is already a terminal state" },
  Fail: {
    Next: "Fail is a terminal state",
    End: "Fail is already a terminal state",
    InputPath: "a Fail state has no input or output processing",
    OutputPath: "a Fail state has no input or output processing",
  },
  rule: {
    End: "a Choice rule cannot end the execution; point its Next at a Succeed state",
  },
  nestedRule: {
    Next: "rules inside And, Or and Not have no Next; only the rules in Choices do",
    Assign: "rules inside And, Or and Not cannot assign; only the rules in Choices can",
  },
};

function unknownFieldMessage(field: string, path: string, error: ErrorObject): string {
  const where = containerLabel(path);
  const kind = containerKind(path, error.data);
  const hint = MISPLACED_HINTS[kind]?.[field];
  if (hint) return `Field '${field}' is not supported in ${where}: ${hint}`;
  const suggestion = closest(field, allowedFields(error.parentSchema as SchemaObject));
  return `Field '${field}' is not supported in ${where}${suggestion ? `; did you mean '${suggestion}'?` : ""}`;
}

/** What kind of object a pointer names, for hints: a state type, "rule", "nestedRule" or "". */
function containerKind(path: string, data: unknown): string {
  const segments = segmentsOf(path);
  if (segments[segments.length - 2] === "States") {
    const type = (data as { Type?: unknown } | null)?.Type;
    return typeof type === "string" ? type : "";
  }
  const last = segments[segments.length - 1];
  const beforeLast = segments[segments.length - 2];
  if (beforeLast === "Choices" && /^\d+$/.test(last ?? "")) return "rule";
  if (last === "Not" || beforeLast === "And" || beforeLast === "Or") return "nestedRule";
  return "";
}

/** "a Task state ('Foo')", "a Retry entry of state 'Foo'", "the state machine", … */
function containerLabel(path: string): string {
  const segments = segmentsOf(path);
  if (segments.length === 0) return "the state machine";
  const last = segments[segments.length - 1]!;
  const beforeLast = segments[segments.length - 2];
  const owner = ownerLabel(path);
  if (beforeLast === "States") return `state '${last}'`;
  if (
    last === "Credentials" ||
    last === "ItemReader" ||
    last === "ItemBatcher" ||
    last === "ResultWriter"
  ) {
    return `the ${last} of ${owner}`;
  }
  if (beforeLast === "Retry") return `retrier ${last} of ${owner}`;
  if (beforeLast === "Catch") return `catcher ${last} of ${owner}`;
  if (beforeLast === "Choices") return `Choice rule ${last} of ${owner}`;
  if (beforeLast === "Branches") return `branch ${last} of ${owner}`;
  return `${fieldLabel(path)} of ${owner}`;
}

const allowedCache = new WeakMap<object, string[]>();

/** The property names a schema (and the partials it composes with allOf) allows. */
function allowedFields(schema: SchemaObject | undefined): string[] {
  if (!schema) return [];
  const cached = allowedCache.get(schema);
  if (cached) return cached;
  const names = new Set<string>();
  const visit = (s: SchemaObject, depth: number): void => {
    if (depth > 4) return;
    for (const name of Object.keys((s.properties as SchemaObject | undefined) ?? {}))
      names.add(name);
    for (const part of (s.allOf as SchemaObject[] | undefined) ?? [])
      visit(resolve(part), depth + 1);
  };
  visit(schema, 0);
  const list = [...names];
  allowedCache.set(schema, list);
  return list;
}

/** Follows a local `$ref` ("#/$defs/name") into the bundled schema. */
function resolve(schema: SchemaObject): SchemaObject {
  const target = schema.$ref;
  if (typeof target !== "string" || !target.startsWith("#/$defs/")) return schema;
  const defs = aslSchema.$defs as Record<string, SchemaObject>;
  return defs[target.slice("#/$defs/".length)] ?? schema;
}

function article(type: string): string {
  if (type === "null") return "null";
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

function capital(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
