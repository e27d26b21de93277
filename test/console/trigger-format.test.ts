import { describe, expect, it } from "vitest";
import { keysText, patternSummary, targetText } from "../../console/src/triggers/format.js";

/** How the trigger pages write targets, patterns and event details (console/src/triggers/format.ts). */
describe("trigger formats", () => {
  it("a target reads as machine, machine:alias or machine vN", () => {
    expect(targetText({ stateMachine: "m" })).toBe("m");
    expect(targetText({ stateMachine: "m", alias: "prod" })).toBe("m:prod");
    expect(targetText({ stateMachine: "m", version: 3 })).toBe("m v3");
  });

  it("a pattern reads in one line, nested keys dotted, matchers as …, past three counted", () => {
    expect(patternSummary({})).toBe("any event");
    expect(patternSummary({ source: ["shop", "web"], "detail-type": ["OrderPlaced"] })).toBe(
      "source = shop, web · detail-type = OrderPlaced",
    );
    expect(patternSummary({ detail: { amount: [{ numeric: [">", 100] }] } })).toBe(
      "detail.amount = …",
    );
    expect(patternSummary({ a: ["1"], b: ["2"], c: ["3"], d: ["4"], e: ["5"] })).toBe(
      "a = 1 · b = 2 · c = 3 · +2",
    );
  });

  it("a detail reads as its number of keys", () => {
    expect(keysText({ a: 1 })).toBe("1 key");
    expect(keysText({ a: 1, b: 2 })).toBe("2 keys");
    expect(keysText([1, 2])).toBe("JSON");
  });
});
