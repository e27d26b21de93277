import type { StateMachineDefinition } from "../engine/core/definition.js";
import { isJsonObject } from "../engine/core/json.js";
import { schemaDiagnostics } from "./ajv-diagnostics.js";
import { semanticDiagnostics, type MachineType } from "./checks/index.js";
import { schemaErrors } from "./compile.js";
import { showValue } from "./describe.js";
import { diagnostic, hasErrors, type Diagnostic } from "./diagnostic.js";
import { readSource, type SourceFormat, type SourceResult } from "./source/index.js";

export { CODES, type DiagnosticCode, type Severity } from "./codes.js";
export type { Diagnostic } from "./diagnostic.js";
export { aslSchema } from "./asl/bundle.js";

export interface ValidateOptions {
  /** How to read a string source; by default JSON when it starts with { or [, else YAML. */
  format?: SourceFormat;
  /**
   * What the state machine will be created as (AWS CreateStateMachine `type`);
   * EXPRESS refuses .sync, .waitForTaskToken and activities. Default STANDARD.
   */
  type?: MachineType;
  /**
   * Whether the service validating the definition can call a Task's Resource (its
   * task runners, activities, approvals). Given, each Resource it cannot call gets
   * an UNSERVED_RESOURCE warning; the CLI, which serves nothing, leaves it out.
   */
  serves?: (resource: string) => boolean;
}

export interface ValidationResult {
  valid: boolean;
  diagnostics: Diagnostic[];
  /** The definition, when valid. */
  definition?: StateMachineDefinition;
}

/**
 * Validates an ASL definition the way AWS's ValidateStateMachineDefinition does: the
 * source is read (object, JSON or YAML text, or bytes), checked against the ASL JSON
 * Schema, then by the semantic checks (transitions, scopes, query languages, paths,
 * intrinsic functions, JSONata, error names, resources). Never throws on bad input.
 */
export function validateDefinition(
  source: unknown,
  options: ValidateOptions = {},
): ValidationResult {
  const read = readSource(source, options.format);
  if (read.value === undefined) return result(read.diagnostics, read);
  const value = read.value;
  if (value === null) {
    return result(
      [diagnostic("MISSING_DESCRIPTION", "The definition is null; send a JSON or YAML object", "")],
      read,
    );
  }
  if (!isJsonObject(value)) {
    const kind = Array.isArray(value) ? "an array" : `a ${typeof value}`;
    return result(
      [
        diagnostic(
          "NOT_AN_OBJECT",
          `The definition is ${kind} (${showValue(value)}); a definition is an object with StartAt and States`,
          "",
        ),
      ],
      read,
    );
  }
  const diagnostics = [
    ...schemaDiagnostics(schemaErrors(value)),
    ...semanticDiagnostics(value, options.type ?? "STANDARD", options.serves),
  ];
  const out = result(diagnostics, read);
  if (out.valid) out.definition = value as unknown as StateMachineDefinition;
  return out;
}

/** Adds line/column from the source and orders diagnostics as they appear in it. */
function result(diagnostics: Diagnostic[], read: SourceResult): ValidationResult {
  const placed = diagnostics.map((d, index) => {
    if (d.line !== undefined) return { d, index };
    const at = read.locate(d.path);
    return { d: at ? { ...d, line: at.line, column: at.column } : d, index };
  });
  placed.sort(
    (a, b) =>
      (a.d.line ?? 0) - (b.d.line ?? 0) ||
      (a.d.column ?? 0) - (b.d.column ?? 0) ||
      a.index - b.index,
  );
  const sorted = placed.map((p) => p.d);
  return { valid: !hasErrors(sorted), diagnostics: sorted };
}
