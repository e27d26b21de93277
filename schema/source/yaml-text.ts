import type { Document, Node } from "yaml";
import { load as loadYaml } from "../lazy/yaml.js";
import { diagnostic, type Diagnostic } from "../diagnostic.js";
import { child, segmentsOf } from "../pointer.js";
import type { Position } from "./lines.js";
import { MAX_NESTING_DEPTH, MAX_SOURCE_DIAGNOSTICS, MAX_YAML_ALIASES } from "./limits.js";
import { findExcessiveNesting } from "./yaml-depth.js";
import { firstSyntaxError, isSyntaxError } from "./yaml-errors.js";

/**
 * YAML 1.2 text (JSON is YAML too, but JSON text goes through json-text.ts, which
 * is faster and cannot be driven into deep recursion). Duplicate keys are errors,
 * aliases are capped (billion-laughs), and nesting is checked before parsing.
 */
export interface YamlTextResult {
  value?: unknown;
  diagnostics: Diagnostic[];
  locate(pointer: string): Position | undefined;
}

export function parseYamlText(text: string): YamlTextResult {
  const { LineCounter, parseDocument } = loadYaml();
  const lineCounter = new LineCounter();
  const position = (offset: number): Position => {
    const { line, col } = lineCounter.linePos(offset);
    return { line, column: col };
  };
  const tooDeep = findExcessiveNesting(text, MAX_NESTING_DEPTH);
  if (tooDeep >= 0) {
    // Line starts are needed for the position, without parsing the text.
    lineCounter.addNewLine(0);
    for (let i = 0; i < text.length; i++) if (text[i] === "\n") lineCounter.addNewLine(i + 1);
    return failed({
      ...diagnostic(
        "TOO_DEEPLY_NESTED",
        `The YAML nests deeper than ${MAX_NESTING_DEPTH} levels here; flatten the definition`,
        "",
      ),
      ...position(tooDeep),
    });
  }

  let doc: Document.Parsed;
  try {
    // logLevel "error": a complex key (`? [a, b]`) made the library print a warning to
    // stderr on every request; what it becomes is the validator's to report.
    doc = parseDocument(text, {
      lineCounter,
      uniqueKeys: true,
      merge: true,
      prettyErrors: false,
      logLevel: "error",
    });
  } catch (error) {
    return failed(
      diagnostic("INVALID_YAML_DESCRIPTION", `The YAML does not parse: ${describe(error)}`, ""),
    );
  }
  const locate = (pointer: string): Position | undefined => {
    const offset = locateOffset(doc, pointer);
    return offset === undefined ? undefined : position(offset);
  };

  // One syntax error, the first, where it has to be fixed (yaml-errors.ts); duplicate
  // keys before it are mistakes of their own, those after it may follow from it.
  const diagnostics: Diagnostic[] = [];
  const syntax = firstSyntaxError(text, doc.errors);
  const before = syntax?.offset ?? Infinity;
  for (const error of doc.errors) {
    if (diagnostics.length >= MAX_SOURCE_DIAGNOSTICS) break;
    if (isSyntaxError(error) || error.pos[0] > before) continue;
    const where = position(error.pos[0]);
    if (error.code === "DUPLICATE_KEY") {
      const pointer = pointerAt(doc.contents, error.pos[0]);
      const key = segmentsOf(pointer).pop();
      const what = key === undefined ? "This key" : `Key '${key}'`;
      diagnostics.push({
        ...diagnostic("DUPLICATE_KEY", `${what} appears twice in this mapping; keep one`, pointer),
        ...where,
      });
    } else {
      diagnostics.push({
        ...diagnostic(
          "TOO_DEEPLY_NESTED",
          "The YAML nests too deeply to read; flatten the definition",
          "",
        ),
        ...where,
      });
    }
  }
  if (syntax) {
    diagnostics.push({
      ...diagnostic("INVALID_YAML_DESCRIPTION", syntax.message, ""),
      ...position(syntax.offset),
    });
  }
  if (diagnostics.length > 0) return { diagnostics, locate };

  try {
    return { value: doc.toJS({ maxAliasCount: MAX_YAML_ALIASES }), diagnostics, locate };
  } catch (error) {
    if (error instanceof ReferenceError && /alias/i.test(error.message)) {
      return failed(
        diagnostic(
          "EXCESSIVE_ALIASES",
          `YAML aliases expand more than ${MAX_YAML_ALIASES} times; inline the repeated parts instead`,
          "",
        ),
        locate,
      );
    }
    if (error instanceof RangeError) {
      return failed(
        diagnostic("TOO_DEEPLY_NESTED", "The YAML nests too deeply (through aliases) to read", ""),
        locate,
      );
    }
    return failed(
      diagnostic("INVALID_YAML_DESCRIPTION", `The YAML does not parse: ${describe(error)}`, ""),
      locate,
    );
  }
}

function failed(d: Diagnostic, locate: YamlTextResult["locate"] = () => undefined): YamlTextResult {
  return { diagnostics: [d], locate };
}

/** Offset of the key (for mapping members) or item (for sequence items) a pointer names. */
function locateOffset(doc: Document.Parsed, pointer: string): number | undefined {
  const { isAlias, isMap, isSeq } = loadYaml();
  let node: unknown = doc.contents;
  let offset: number | undefined = rangeStart(node);
  for (const segment of segmentsOf(pointer)) {
    if (isAlias(node)) node = node.resolve(doc);
    if (isMap(node)) {
      const pair = node.items.find((p) => keyText(p.key) === segment);
      if (!pair) break;
      offset = rangeStart(pair.key) ?? rangeStart(pair.value) ?? offset;
      node = pair.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)];
      if (item === undefined) break;
      offset = rangeStart(item) ?? offset;
      node = item;
    } else {
      break;
    }
  }
  return offset;
}

/** The pointer of the innermost mapping key or item whose source range holds `offset`. */
function pointerAt(root: unknown, offset: number): string {
  const { isMap, isSeq } = loadYaml();
  let pointer = "";
  let node: unknown = root;
  // Bounded by the nesting check that ran before parsing.
  for (let depth = 0; depth <= MAX_NESTING_DEPTH; depth++) {
    let next: unknown;
    if (isMap(node)) {
      for (const pair of node.items) {
        const key = pair.key as Node | null;
        const value = pair.value as Node | null;
        const start = key?.range?.[0];
        const end = value?.range?.[2] ?? key?.range?.[2];
        if (
          start !== undefined &&
          end !== undefined &&
          start <= offset &&
          offset < Math.max(end, start + 1)
        ) {
          pointer = child(pointer, keyText(key) ?? "");
          next = value;
          if (key?.range && offset < key.range[2]) return pointer;
        }
      }
    } else if (isSeq(node)) {
      node.items.forEach((item, index) => {
        const range = (item as Node | null)?.range;
        if (range && range[0] <= offset && offset < range[2]) {
          pointer = child(pointer, index);
          next = item;
        }
      });
    }
    if (next === undefined) return pointer;
    node = next;
  }
  return pointer;
}

function keyText(key: unknown): string | undefined {
  if (loadYaml().isScalar(key)) return String(key.value);
  return typeof key === "string" ? key : undefined;
}

function rangeStart(node: unknown): number | undefined {
  const range = (node as Node | null | undefined)?.range;
  return range ? range[0] : undefined;
}

function firstLine(message: string): string {
  return message.split("\n")[0] ?? message;
}

function describe(error: unknown): string {
  return error instanceof Error ? firstLine(error.message) : String(error);
}
