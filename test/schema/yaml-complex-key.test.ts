import { afterEach, describe, expect, it, vi } from "vitest";
import { parseYamlText } from "../../schema/source/yaml-text.js";

/** A YAML complex key printed a Node warning on every request (issue 13). */
afterEach(() => vi.restoreAllMocks());

describe("YAML complex keys", () => {
  it("parse without a process warning", () => {
    const warn = vi.spyOn(process, "emitWarning").mockImplementation(() => undefined);
    const consoleWarn = vi.spyOn(console, "warn").mockImplementation(() => undefined);
    const result = parseYamlText("StartAt: A\nStates:\n  ? [a, b]\n  : {Type: Pass, End: true}\n");
    expect(result.diagnostics).toEqual([]);
    expect(warn).not.toHaveBeenCalled();
    expect(consoleWarn).not.toHaveBeenCalled();
  });
});
