import type { StateMachineDefinition } from "../engine/core/definition.js";
import { isJsonObject } from "../engine/core/json.js";
import { schemaDiagnostics } from "./ajv-diagnostics.js";
import { semanticDiagnostics, type MachineType } from "./checks/index.js";
import { schemaErrors } from "./compile.js";
import { showValue } from "./describe.js";
import { diagnostic, hasErrors, type Diagnostic } from "./diagnostic.js";
import {
  fillText,
  fillValue,
  needsPlaceholderValue,
  quoteBarePlaceholders,
  unresolvedPlaceholders,
  type Substitutions,
} from "./placeholders.js";
import { MAX_DEFINITION_BYTES } from "./source/limits.js";
import { findSlips } from "./slips.js";
import { readSource, type SourceFormat, type SourceResult } from "./source/index.js";

export { CODES, type DiagnosticCode, type Severity } from "./codes.js";
export type { Diagnostic } from "./diagnostic.js";
export type { Substitutions } from "./placeholders.js";
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
  /**
   * Values for `${Name}` placeholders (SAM DefinitionSubstitutions), filled in
   * textually before the source is parsed, as SAM does. Placeholders left unfilled
   * are UNRESOLVED_PLACEHOLDER warnings and the checks needing their value are skipped.
   */
  substitutions?: Substitutions;
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
  const substitutions = options.substitutions ?? {};
  const read = readSource(filledText(source, substitutions), options.format);
  if (read.value === undefined) return result(read.diagnostics, read);
  // An object is filled once reading has ruled out cycles and hostile nesting.
  const value =
    read.format === undefined && Object.keys(substitutions).length > 0
      ? fillValue(read.value, substitutions)
      : read.value;
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
  const unresolved = unresolvedPlaceholders(value);
  // Known slips are reported once; the rest of the checks see them mended.
  const slips = findSlips(value);
  const diagnostics = [
    ...unresolved.diagnostics,
    ...slips.diagnostics,
    ...schemaDiagnostics(schemaErrors(slips.mended)),
    ...semanticDiagnostics(slips.mended, options.type ?? "STANDARD", options.serves),
  ].filter((d) => !needsPlaceholderValue(d, unresolved));
  const out = result(diagnostics, read);
  if (out.valid) out.definition = value as unknown as StateMachineDefinition;
  return out;
}

/**
 * Text with its placeholders filled textually (SAM substitutes before parsing), and
 * any still bare in JSON text quoted so that the rest can be read. Objects are
 * filled after reading.
 */
function filledText(source: unknown, values: Substitutions): unknown {
  let text: string;
  if (typeof source === "string") text = source;
  else if (
    source instanceof Uint8Array &&
    source.byteLength <= MAX_DEFINITION_BYTES &&
    source.includes(0x24 /* $ */)
  ) {
    try {
      text = new TextDecoder("utf-8", { fatal: true }).decode(source);
    } catch {
      return source; // readSource reports it as NOT_TEXT
    }
  } else return source;
  if (!text.includes("${")) return text;
  const out = fillText(text, values);
  return /^\uFEFF?\s*[[{]/.test(out) ? quoteBarePlaceholders(out) : out;
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
