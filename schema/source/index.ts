import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { segmentsOf } from "../pointer.js";
import { parseJsonText, type JsonTextResult } from "./json-text.js";
import { checkJsonValue } from "./json-value.js";
import type { Position } from "./lines.js";
import { MAX_DEFINITION_BYTES } from "./limits.js";
import { parseYamlText } from "./yaml-text.js";

export type { Position } from "./lines.js";
export type SourceFormat = "json" | "yaml";

/**
 * A definition as it arrived: an object, JSON or YAML text, or raw bytes. Reading it
 * never throws and never hangs: every problem (too large, binary, empty, syntax,
 * duplicate keys, hostile nesting or aliases, non-JSON values) becomes a diagnostic.
 */
export interface SourceResult {
  /** The parsed value; present only when reading produced no error. */
  value?: unknown;
  diagnostics: Diagnostic[];
  /** Line/column of the place a JSON pointer names (the nearest existing ancestor). */
  locate(pointer: string): Position | undefined;
  /** What the text was read as; undefined for objects. */
  format?: SourceFormat;
}

const NOWHERE = (): undefined => undefined;

export function readSource(source: unknown, format?: SourceFormat): SourceResult {
  if (source === undefined || source === null) {
    return fail(
      diagnostic(
        "MISSING_DESCRIPTION",
        "The definition is null or missing; send a JSON or YAML object",
        "",
      ),
    );
  }
  if (source instanceof Uint8Array) return readBytes(source, format);
  if (typeof source === "string") return readText(source, format);
  const problems = checkJsonValue(source);
  return problems.length > 0
    ? { diagnostics: problems, locate: NOWHERE }
    : { value: source, diagnostics: [], locate: NOWHERE };
}

function readBytes(bytes: Uint8Array, format: SourceFormat | undefined): SourceResult {
  if (bytes.byteLength > MAX_DEFINITION_BYTES) return tooLarge(bytes.byteLength);
  let text: string;
  try {
    text = new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return fail(diagnostic("NOT_TEXT", "The definition is not UTF-8 text; send JSON or YAML", ""));
  }
  return readText(text, format);
}

function readText(raw: string, format: SourceFormat | undefined): SourceResult {
  // A UTF-16 unit is at most 3 UTF-8 bytes; count exactly only when it matters.
  if (
    raw.length > MAX_DEFINITION_BYTES ||
    (raw.length * 3 > MAX_DEFINITION_BYTES && utf8Length(raw) > MAX_DEFINITION_BYTES)
  ) {
    return tooLarge(utf8Length(raw));
  }
  const text = raw.charCodeAt(0) === 0xfeff ? raw.slice(1) : raw;
  if (looksBinary(text)) {
    return fail(
      diagnostic("NOT_TEXT", "The definition looks like binary data, not JSON or YAML text", ""),
    );
  }
  if (text.trim() === "") {
    return fail(
      diagnostic("MISSING_DESCRIPTION", "The definition is empty; send a JSON or YAML object", ""),
    );
  }
  if (format === "json") return fromJson(text);
  if (format === "yaml") return fromYaml(text);
  // Unspecified: JSON when it looks like JSON, falling back to YAML (a flow mapping
  // such as `{StartAt: A, ...}` is YAML but not JSON); the JSON error wins when
  // neither reads, since the author most likely meant JSON.
  if (/^\s*[[{]/.test(text)) {
    const json = fromJson(text);
    const syntaxOnly =
      json.value === undefined &&
      json.diagnostics.every((d) => d.code === "INVALID_JSON_DESCRIPTION");
    if (!syntaxOnly) return json;
    const yaml = fromYaml(text);
    return yaml.value !== undefined && yaml.value !== null ? yaml : json;
  }
  return fromYaml(text);
}

/**
 * JSON text is parsed without positions first (the common, valid case); positions
 * are computed by a second parse only when a diagnostic needs one.
 */
function fromJson(text: string): SourceResult {
  let withSpans: JsonTextResult | undefined;
  const spans = (): JsonTextResult => (withSpans ??= parseJsonText(text, true));
  const locate = (pointer: string): Position => {
    const result = spans();
    return result.lines.position(jsonOffset(result, pointer));
  };
  const fast = parseJsonText(text, false);
  if (fast.diagnostics.length > 0 || fast.value === undefined) {
    return { diagnostics: spans().diagnostics, locate, format: "json" };
  }
  return { value: fast.value, diagnostics: [], locate, format: "json" };
}

function fromYaml(text: string): SourceResult {
  const result = parseYamlText(text);
  if (result.diagnostics.length > 0)
    return { diagnostics: result.diagnostics, locate: result.locate, format: "yaml" };
  const problems = checkJsonValue(result.value);
  const withPositions = problems.map((d) => ({ ...d, ...result.locate(d.path) }));
  if (withPositions.length > 0)
    return { diagnostics: withPositions, locate: result.locate, format: "yaml" };
  return { value: result.value, diagnostics: [], locate: result.locate, format: "yaml" };
}

/** Offset of the member a pointer names: its key for object members, else its value. */
function jsonOffset(result: JsonTextResult, pointer: string): number {
  let node: unknown = result.value;
  let offset = result.rootOffset;
  for (const segment of segmentsOf(pointer)) {
    if (typeof node !== "object" || node === null) break;
    const members = result.spans.get(node);
    const start = Array.isArray(members) ? members[Number(segment)] : members?.get(segment);
    if (start === undefined) break;
    offset = start;
    node = (node as Record<string, unknown>)[segment];
  }
  return offset;
}

function tooLarge(bytes: number): SourceResult {
  return fail(
    diagnostic(
      "DEFINITION_TOO_LARGE",
      `The definition is ${bytes} bytes; the limit is ${MAX_DEFINITION_BYTES} bytes (1 MiB)`,
      "",
    ),
  );
}

function fail(d: Diagnostic): SourceResult {
  return { diagnostics: [d], locate: NOWHERE };
}

function utf8Length(text: string): number {
  return Buffer.byteLength(text, "utf8");
}

/**
 * NUL never appears in JSON or YAML text; other control characters (except tab, CR,
 * LF) or U+FFFD replacement characters in any number mean bytes were decoded as
 * text by mistake.
 */
function looksBinary(text: string): boolean {
  if (text.includes("\u0000")) return true;
  const sample = text.length > 65536 ? text.slice(0, 65536) : text;
  let odd = 0;
  for (let i = 0; i < sample.length; i++) {
    const c = sample.charCodeAt(i);
    if ((c < 32 && c !== 9 && c !== 10 && c !== 13) || c === 0xfffd) odd++;
  }
  return odd > 8 && odd * 100 > sample.length;
}
