import { diagnostic, type Diagnostic } from "./diagnostic.js";
import { child } from "./pointer.js";

/**
 * `${Name}` placeholders, as SAM `DefinitionSubstitutions`, CDK and Terraform
 * `templatefile` write them into definitions. SAM fills them in textually before
 * the definition is parsed (CloudFormation Fn::Sub semantics), so in YAML
 * `Seconds: ${WaitSeconds}` becomes a number; we do the same. What stays unfilled
 * is reported once per occurrence, and the checks that need its value are skipped,
 * so a template can be checked before it is deployed.
 */

/** Fn::Sub names: letters, digits, `_ . : -` (`${AWS::Region}`, `${Fn.Arn}`); `${!x}` is an escape. */
const PLACEHOLDER = /\$\{([A-Za-z0-9_.:-]+)\}/g;

/** The same, anchored at `lastIndex`. */
const AT_PLACEHOLDER = new RegExp(PLACEHOLDER.source, "y");

export type Substitutions = Readonly<Record<string, string>>;

/** The names of the placeholders in `text`, in order (repeats included). */
export function placeholdersIn(text: string): string[] {
  return [...text.matchAll(PLACEHOLDER)].map((m) => m[1]!);
}

/** Fills the placeholders `values` names; the others stay as written. */
export function fillText(text: string, values: Substitutions): string {
  return text.replace(PLACEHOLDER, (whole, name: string) =>
    Object.hasOwn(values, name) ? values[name]! : whole,
  );
}

/**
 * JSON text with a placeholder outside any string (`"Seconds": ${Wait}`) does not
 * parse until the placeholder is filled; unfilled, it is quoted so that the rest of
 * the definition can still be checked (columns after it on that line shift by 2).
 */
export function quoteBarePlaceholders(json: string): string {
  let out = "";
  let inString = false;
  for (let i = 0; i < json.length; i++) {
    const c = json[i]!;
    if (inString) {
      out += c;
      if (c === "\\") out += json[++i] ?? "";
      else if (c === '"') inString = false;
      continue;
    }
    if (c === '"') {
      inString = true;
      out += c;
      continue;
    }
    if (c === "$" && json[i + 1] === "{") {
      AT_PLACEHOLDER.lastIndex = i;
      const found = AT_PLACEHOLDER.exec(json);
      if (found) {
        out += `"${found[0]}"`;
        i += found[0].length - 1;
        continue;
      }
    }
    out += c;
  }
  return out;
}

/** Fills placeholders in every string (keys too) of an already parsed definition. */
export function fillValue(value: unknown, values: Substitutions): unknown {
  if (typeof value === "string") return fillText(value, values);
  if (Array.isArray(value)) return value.map((v) => fillValue(v, values));
  if (typeof value === "object" && value !== null) {
    return Object.fromEntries(
      Object.entries(value).map(([k, v]) => [fillText(k, values), fillValue(v, values)]),
    );
  }
  return value;
}

export interface Unresolved {
  /** One UNRESOLVED_PLACEHOLDER warning per placeholder left. */
  diagnostics: Diagnostic[];
  /** Where they are: errors at these places need the value and are skipped. */
  pointers: ReadonlySet<string>;
}

/** The placeholders left in string values of a parsed definition. */
export function unresolvedPlaceholders(value: unknown): Unresolved {
  const diagnostics: Diagnostic[] = [];
  const pointers = new Set<string>();
  const walk = (node: unknown, at: string): void => {
    if (typeof node === "string") {
      for (const name of placeholdersIn(node)) {
        pointers.add(at);
        diagnostics.push(
          diagnostic(
            "UNRESOLVED_PLACEHOLDER",
            `The placeholder \${${name}} is not filled in; checks that need its value are skipped (fill it with --sub ${name}=… or definitionSubstitutions)`,
            at,
          ),
        );
      }
    } else if (Array.isArray(node)) {
      node.forEach((v, i) => walk(v, child(at, i)));
    } else if (typeof node === "object" && node !== null) {
      for (const [k, v] of Object.entries(node)) walk(v, child(at, k));
    }
  };
  walk(value, "");
  return { diagnostics, pointers };
}

/** Diagnostics computed from the transition graph, which a placeholder in a transition leaves open. */
const GRAPH_CODES: ReadonlySet<string> = new Set([
  "UNREACHABLE_STATE",
  "NO_PATH_TO_END",
  "MISSING_END_STATE",
]);
const TRANSITION_FIELD = /\/(Next|Default|StartAt)$/;

/**
 * Whether a diagnostic needs the value of a placeholder: it is about a field that
 * holds one (a Resource that is not an ARN, a Seconds that is not a number, a Next
 * naming no state), or it follows from the transition graph while a transition is
 * still a placeholder.
 */
export function needsPlaceholderValue(d: Diagnostic, unresolved: Unresolved): boolean {
  if (d.code === "UNRESOLVED_PLACEHOLDER") return false;
  if (unresolved.pointers.has(d.path)) return true;
  if (!GRAPH_CODES.has(d.code)) return false;
  for (const p of unresolved.pointers) if (TRANSITION_FIELD.test(p)) return true;
  return false;
}
