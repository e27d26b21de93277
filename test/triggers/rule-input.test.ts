import { describe, expect, it } from "vitest";
import { checkWaitParameters } from "../../runtime/triggers/events/event-waits.js";
import { readPath, ruleDefinition, ruleInput } from "../../runtime/triggers/events/rule-record.js";

const event = {
  version: "0",
  id: "e-1",
  "detail-type": "OrderPlaced",
  source: "shop",
  time: "2026-12-05T18:00:00Z",
  resources: ["arn:x"],
  detail: { order: { id: "o-1", lines: [{ sku: "A" }] }, amount: 250 },
};

describe("what a rule gives its target", () => {
  it("the event, a path of it, a constant or a template", () => {
    expect(ruleInput({ stateMachine: "m" }, event)).toEqual(event);
    expect(ruleInput({ stateMachine: "m", inputPath: "$.detail.order" }, event)).toEqual({
      id: "o-1",
      lines: [{ sku: "A" }],
    });
    expect(ruleInput({ stateMachine: "m", input: { fixed: true } }, event)).toEqual({
      fixed: true,
    });
    expect(
      ruleInput(
        {
          stateMachine: "m",
          inputTemplate: {
            order: "<$.detail.order.id>",
            amount: "<$.detail.amount>",
            text: "order <$.detail.order.id> of <$.source>",
            first: "<$.detail.order.lines[0].sku>",
            missing: "<$.detail.nope>",
          },
        },
        event,
      ),
    ).toEqual({ order: "o-1", amount: 250, text: "order o-1 of shop", first: "A", missing: null });
  });

  it("reads simple paths", () => {
    expect(readPath(event, "$")).toEqual(event);
    expect(readPath(event, "$['detail-type']")).toBe("OrderPlaced");
    expect(readPath(event, "$.resources[0]")).toBe("arn:x");
    expect(readPath(event, "$.detail.x.y")).toBeUndefined();
  });

  it("refuses a malformed pattern or target, naming the field", () => {
    const target = { stateMachine: "m" };
    expect(() => ruleDefinition("r", { eventPattern: { source: "shop" }, target }, 0)).toThrow(
      expect.objectContaining({ pointer: "/eventPattern/source" }),
    );
    expect(() =>
      ruleDefinition(
        "r",
        { eventPattern: { source: ["shop"] }, target: { ...target, inputPath: "detail" } },
        0,
      ),
    ).toThrow(expect.objectContaining({ pointer: "/target/inputPath" }));
    expect(() =>
      ruleDefinition(
        "r",
        { eventPattern: { source: ["shop"] }, target: { ...target, input: 1, inputPath: "$" } },
        0,
      ),
    ).toThrow(expect.objectContaining({ pointer: "/target/inputPath" }));
  });
});

describe("waitForEvent Parameters", () => {
  it("need a Pattern or a Match, well formed", () => {
    expect(() => checkWaitParameters({})).toThrow(/Pattern.*Match/);
    expect(() => checkWaitParameters({ Pattern: { source: "x" } })).toThrow(/Pattern\/source/);
    expect(() => checkWaitParameters({ Match: "$event.(" })).toThrow(/Match does not parse/);
    expect(() => checkWaitParameters({ Match: "true", TimeoutSeconds: -1 })).toThrow(
      /TimeoutSeconds/,
    );
    expect(
      checkWaitParameters({ Pattern: { source: ["x"] }, Match: "{% $event.id = 'a' %}" }),
    ).toMatchObject({
      Pattern: { source: ["x"] },
    });
  });
});
