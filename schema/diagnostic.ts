import { severityOf, type DiagnosticCode, type Severity } from "./codes.js";

/**
 * One finding about a definition. `path` is a JSON pointer (RFC 6901) into the
 * definition ("" is the whole document); `line`/`column` (1-based) are filled in when
 * the definition arrived as JSON or YAML text.
 */
export interface Diagnostic {
  code: DiagnosticCode;
  severity: Severity;
  message: string;
  path: string;
  line?: number;
  column?: number;
}

/** A diagnostic whose severity is the one the registry gives its code. */
export function diagnostic(code: DiagnosticCode, message: string, path: string): Diagnostic {
  return { code, severity: severityOf(code), message, path };
}

export function hasErrors(diagnostics: readonly Diagnostic[]): boolean {
  return diagnostics.some((d) => d.severity === "error");
}

/** Quotes a name for a message the way AWS's messages do: 'Name'. */
export function quote(name: string): string {
  return `'${name}'`;
}

/** "A, B and C" (at most `max` names, then "… and N more"). */
export function listNames(names: readonly string[], max = 10): string {
  if (names.length === 0) return "(none)";
  const shown = names.slice(0, max);
  const rest = names.length - shown.length;
  return rest > 0 ? `${shown.join(", ")} and ${rest} more` : shown.join(", ");
}
