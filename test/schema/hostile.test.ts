import { describe, expect, it } from "vitest";
import { validateDefinition, type DiagnosticCode } from "../../schema/index.js";

/**
 * Hostile or broken input yields a diagnostic, quickly: never an exception, a hang,
 * a stack overflow or an exponential expansion.
 */
function billionLaughs(): string {
  const names = "abcdefghij";
  let text = `a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol","lol"]\n`;
  for (let i = 1; i < names.length; i++) {
    text += `${names[i]}: &${names[i]} [${Array(10)
      .fill(`*${names[i - 1]}`)
      .join(",")}]\n`;
  }
  return text;
}

function deepObject(depth: number): unknown {
  const root: Record<string, unknown> = {};
  let node = root;
  for (let i = 0; i < depth; i++) {
    const next: Record<string, unknown> = {};
    node.x = next;
    node = next;
  }
  return root;
}

const CASES: {
  name: string;
  source: () => unknown;
  code: DiagnosticCode;
  format?: "json" | "yaml";
}[] = [
  { name: "empty text", source: () => "", code: "MISSING_DESCRIPTION" },
  { name: "whitespace only", source: () => " \n\t\n", code: "MISSING_DESCRIPTION" },
  { name: "null", source: () => null, code: "MISSING_DESCRIPTION" },
  { name: "JSON null", source: () => "null", code: "MISSING_DESCRIPTION" },
  {
    name: "binary bytes",
    source: () => Uint8Array.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46]),
    code: "NOT_TEXT",
  },
  { name: "binary text", source: () => "PK\u0003\u0004\u0000\u0000\u0008\u0000", code: "NOT_TEXT" },
  {
    name: "over 1 MiB",
    source: () => `{"Comment": "${"x".repeat(1024 * 1024)}"}`,
    code: "DEFINITION_TOO_LARGE",
  },
  {
    name: "over 1 MiB of bytes",
    source: () => new Uint8Array(1024 * 1024 + 1).fill(0x20),
    code: "DEFINITION_TOO_LARGE",
  },
  { name: "YAML alias bomb", source: billionLaughs, code: "EXCESSIVE_ALIASES" },
  {
    name: "10,000-deep JSON arrays",
    source: () => "[".repeat(10_000) + "]".repeat(10_000),
    code: "TOO_DEEPLY_NESTED",
  },
  {
    name: "10,000-deep JSON objects",
    source: () => '{"a":'.repeat(10_000) + "1" + "}".repeat(10_000),
    code: "TOO_DEEPLY_NESTED",
  },
  {
    name: "10,000-deep YAML flow",
    source: () => "a: " + "[".repeat(10_000) + "]".repeat(10_000),
    code: "TOO_DEEPLY_NESTED",
    format: "yaml",
  },
  {
    name: "10,000-deep YAML flow mappings",
    source: () => "{a: ".repeat(10_000) + "1" + "}".repeat(10_000),
    code: "TOO_DEEPLY_NESTED",
    format: "yaml",
  },
  {
    name: "10,000-deep YAML block sequence",
    source: () => "- ".repeat(10_000) + "x",
    code: "TOO_DEEPLY_NESTED",
  },
  {
    name: "deep YAML block mappings",
    source: () =>
      Array.from({ length: 1000 }, (_, i) => `${" ".repeat(i)}k${i}:`).join("\n") + " 1",
    code: "TOO_DEEPLY_NESTED",
  },
  { name: "10,000-deep object", source: () => deepObject(10_000), code: "TOO_DEEPLY_NESTED" },
  {
    name: "duplicate keys in JSON",
    source: () => '{"StartAt": "A", "StartAt": "A", "States": {}}',
    code: "DUPLICATE_KEY",
  },
  {
    name: "duplicate keys in YAML",
    source: () => "StartAt: A\nStartAt: B\nStates: {}\n",
    code: "DUPLICATE_KEY",
  },
  { name: "a number", source: () => 42, code: "NOT_AN_OBJECT" },
  { name: "a JSON number", source: () => "42", code: "NOT_AN_OBJECT" },
  { name: "an array", source: () => [], code: "NOT_AN_OBJECT" },
  { name: "a JSON array", source: () => "[1, 2]", code: "NOT_AN_OBJECT" },
  { name: "a YAML string", source: () => "not a definition", code: "NOT_AN_OBJECT" },
  { name: "broken JSON", source: () => '{"StartAt": ', code: "INVALID_JSON_DESCRIPTION" },
  {
    name: "broken YAML",
    source: () => "StartAt: [A\nStates: {",
    code: "INVALID_YAML_DESCRIPTION",
    format: "yaml",
  },
  {
    name: "several YAML documents",
    source: () => "a: 1\n---\nb: 2\n",
    code: "INVALID_YAML_DESCRIPTION",
  },
  {
    name: "a cycle",
    source: () => {
      const o: Record<string, unknown> = {};
      o.self = o;
      return o;
    },
    code: "NOT_JSON",
  },
  {
    name: "a function value",
    source: () => ({ StartAt: () => "A", States: {} }),
    code: "NOT_JSON",
  },
  {
    name: "NaN",
    source: () => ({ StartAt: "A", States: {}, TimeoutSeconds: NaN }),
    code: "NOT_JSON",
  },
  {
    name: "YAML .inf",
    source: () => "StartAt: A\nTimeoutSeconds: .inf\nStates: {}\n",
    code: "NOT_JSON",
  },
];

describe("hostile input gives a diagnostic quickly", () => {
  it.each(CASES)("$name → $code", ({ source, code, format }) => {
    const input = source();
    const start = performance.now();
    const result = validateDefinition(input, format ? { format } : {});
    const elapsed = performance.now() - start;
    expect(result.valid).toBe(false);
    expect(result.definition).toBeUndefined();
    expect(result.diagnostics.map((d) => d.code)).toContain(code);
    expect(elapsed).toBeLessThan(1000);
  });
});
