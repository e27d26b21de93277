import type { StateMachineDefinition } from "../engine/core/definition.js";
import type { Diagnostic } from "../schema/diagnostic.js";
import { validateDefinition, type Substitutions } from "../schema/index.js";
import { isTextBody } from "./body.js";
import { apiError } from "./errors.js";

/**
 * Where a definition arrives: as the `definition` field of a JSON body (an object,
 * or JSON/YAML text in a string), or as the whole body with a YAML/text content
 * type. The validator reads all of them and reports line/column for text.
 */
export type DefinitionSource = {
  source: unknown;
  format?: "json" | "yaml";
  /** `definitionSubstitutions` of a JSON body: values for `${Name}` placeholders. */
  substitutions?: Substitutions;
};

/** The definition a request carries; `jsonField` is the body field for JSON bodies. */
export function definitionSource(body: unknown, contentType: string | undefined): DefinitionSource {
  if (isTextBody(contentType)) {
    const essence = contentType!.split(";")[0]!.trim().toLowerCase();
    // text/plain may hold either: JSON when it looks like JSON (strictly, as
    // `stepwise validate` reads a .json file), YAML otherwise.
    return essence === "text/plain" ? textSource(body) : { source: body, format: "yaml" };
  }
  const json = body as { definition?: unknown; definitionSubstitutions?: unknown } | undefined;
  const substitutions = substitutionsOf(json?.definitionSubstitutions);
  const source = textSource(json?.definition);
  return substitutions ? { ...source, substitutions } : source;
}

/**
 * `definitionSubstitutions`, as in SAM's AWS::Serverless::StateMachine: a map of
 * names to values, filled into the definition text; numbers and booleans are
 * written as JSON spells them (the route schema refuses other types).
 */
function substitutionsOf(raw: unknown): Substitutions | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) return undefined;
  return Object.fromEntries(
    Object.entries(raw).map(([k, v]) => [k, typeof v === "string" ? v : JSON.stringify(v)]),
  );
}

/**
 * Text that opens with `{` or `[` is read as strict JSON: a trailing comma is an
 * error with its line and column, not YAML that happens to parse. YAML flow style
 * is still taken with a YAML content type.
 */
function textSource(source: unknown): DefinitionSource {
  return typeof source === "string" && /^\uFEFF?\s*[[{]/.test(source)
    ? { source, format: "json" }
    : { source };
}

/**
 * The definition's text as sent, to be kept byte for byte: text given as text, not
 * an object, and not one that substitutions rewrote (what ran is then the result).
 */
export function sentText(source: DefinitionSource): string | undefined {
  return typeof source.source === "string" && !source.substitutions ? source.source : undefined;
}

export interface Checked {
  valid: boolean;
  diagnostics: Diagnostic[];
  definition?: StateMachineDefinition;
}

export function check(source: DefinitionSource, serves?: (resource: string) => boolean): Checked {
  const result = validateDefinition(source.source, {
    ...(source.format !== undefined ? { format: source.format } : {}),
    ...(serves ? { serves } : {}),
    ...(source.substitutions ? { substitutions: source.substitutions } : {}),
  });
  return result.definition !== undefined
    ? { valid: result.valid, diagnostics: result.diagnostics, definition: result.definition }
    : { valid: result.valid, diagnostics: result.diagnostics };
}

/** The validated definition, or InvalidDefinition (400) with every diagnostic in `details`. */
export function requireValidDefinition(
  source: DefinitionSource,
  serves?: (resource: string) => boolean,
): { definition: StateMachineDefinition; warnings: Diagnostic[] } {
  const result = check(source, serves);
  if (result.valid && result.definition) {
    return {
      definition: result.definition,
      warnings: result.diagnostics.filter((d) => d.severity === "warning"),
    };
  }
  const first = result.diagnostics.find((d) => d.severity === "error") ?? result.diagnostics[0];
  const where = first
    ? `${first.path === "" ? "/" : first.path}${first.line !== undefined ? ` (line ${first.line}, column ${first.column ?? 1})` : ""}`
    : "";
  const reason = first ? `${first.message} at ${where}` : "the validator rejected it";
  throw apiError("InvalidDefinition", { reason }, result.diagnostics);
}
