import { describe, expect, it } from "vitest";
import { compileAslSchema } from "../../schema/compile.js";
import { validateDefinition } from "../../schema/index.js";

/**
 * The service compiles the ASL schema without checking it against JSON Schema's
 * meta-schema (schema/compile.ts: that check cost every start ~100 ms). It is checked
 * here instead, so a malformed schema still fails before it ships.
 */
describe("the ASL schema", () => {
  it("is a valid JSON Schema (draft 2020-12): ajv compiles it with the meta-schema check on", () => {
    expect(() => compileAslSchema({ validateSchema: true })).not.toThrow();
  });

  it("is compiled on first use, and that first use answers like any other", () => {
    const definition = { StartAt: "A", States: { A: { Type: "Pass", End: true } } };
    expect(validateDefinition(definition).valid).toBe(true);
    const bad = validateDefinition({ StartAt: "A", States: { A: { Type: "Pass" } } });
    expect(bad.valid).toBe(false);
  });
});
