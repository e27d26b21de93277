import { describe, expect, it } from "vitest";
import { choiceLabel } from "../../console/src/graph/choice-label.js";
import {
  layoutGraph,
  wrapLabel,
  type LaidState,
  type Point,
} from "../../console/src/graph/layout.js";
import { allNodes, definitionGraph } from "../../console/src/graph/model.js";

/** Definition → graph model → layout: pure, so checked without a browser. */

const definition = {
  StartAt: "Check",
  States: {
    Check: {
      Type: "Choice",
      Choices: [
        { Variable: "$.x", NumericGreaterThan: 3, Next: "Fan" },
        {
          And: [
            { Variable: "$.kind", StringEquals: "card" },
            { Not: { Variable: "$.vip", BooleanEquals: true } },
          ],
          Next: "Items",
        },
      ],
      Default: "Done",
    },
    Fan: {
      Type: "Parallel",
      Branches: [
        { StartAt: "A", States: { A: { Type: "Pass", End: true } } },
        {
          StartAt: "B1",
          States: { B1: { Type: "Wait", Seconds: 1, Next: "B2" }, B2: { Type: "Succeed" } },
        },
      ],
      Catch: [{ ErrorEquals: ["States.TaskFailed", "States.Timeout"], Next: "Failed" }],
      Next: "Items",
    },
    Items: {
      Type: "Map",
      ItemProcessor: {
        ProcessorConfig: { Mode: "INLINE" },
        StartAt: "Work",
        States: { Work: { Type: "Task", Resource: "arn:aws:states:::lambda:invoke", End: true } },
      },
      Next: "Done",
    },
    Done: { Type: "Succeed" },
    Failed: { Type: "Fail", Error: "Nope" },
  },
};

describe("definitionGraph", () => {
  const graph = definitionGraph(definition);

  it("has one node per state, nested scopes for Parallel branches and the Map processor", () => {
    expect(
      allNodes(graph)
        .map((n) => n.name)
        .sort(),
    ).toEqual(["A", "B1", "B2", "Check", "Done", "Failed", "Fan", "Items", "Work"].sort());
    const fan = graph.nodes.find((n) => n.name === "Fan")!;
    expect(fan.scopes.map((s) => s.nodes.map((n) => n.name))).toEqual([["A"], ["B1", "B2"]]);
    const items = graph.nodes.find((n) => n.name === "Items")!;
    expect(items.scopes.map((s) => s.label)).toEqual(["Item processor"]);
    expect(items.scopes[0]!.nodes.map((n) => n.name)).toEqual(["Work"]);
  });

  it("labels Choice rules, marks Default, and labels Catch edges with their ErrorEquals", () => {
    const from = (name: string) => graph.edges.filter((e) => e.from === `/${name}`);
    expect(from("Check").map((e) => [e.kind, e.label, e.to])).toEqual([
      ["choice", "$.x > 3", "/Fan"],
      ["choice", '$.kind == "card" && !($.vip == true)', "/Items"],
      ["default", "Default", "/Done"],
    ]);
    expect(from("Fan").map((e) => [e.kind, e.label ?? null, e.to])).toEqual([
      ["next", null, "/Items"],
      ["catch", "States.TaskFailed, States.Timeout", "/Failed"],
    ]);
  });

  it("starts each scope at its StartAt and ends terminal states at its end marker", () => {
    expect(graph.edges.find((e) => e.kind === "start")).toMatchObject({ to: "/Check" });
    const ends = graph.edges.filter((e) => e.kind === "end").map((e) => e.from);
    expect(ends.sort()).toEqual(["/Done", "/Failed"]);
    const branch = graph.nodes.find((n) => n.name === "Fan")!.scopes[1]!;
    expect(branch.edges.map((e) => [e.from, e.to])).toEqual([
      [branch.startId, "/Fan/1/B1"],
      ["/Fan/1/B1", "/Fan/1/B2"],
      ["/Fan/1/B2", branch.endId],
    ]);
  });

  it("draws the legacy Iterator like an ItemProcessor and ignores transitions to unknown states", () => {
    const g = definitionGraph({
      StartAt: "M",
      States: {
        M: {
          Type: "Map",
          Iterator: { StartAt: "I", States: { I: { Type: "Pass", End: true } } },
          Next: "Nowhere",
        },
      },
    });
    expect(allNodes(g).map((n) => n.name)).toEqual(["M", "I"]);
    expect(g.edges.some((e) => e.to.endsWith("Nowhere"))).toBe(false);
  });
});

describe("choiceLabel", () => {
  it.each([
    [{ Variable: "$.x", NumericGreaterThan: 3 }, "$.x > 3"],
    [{ Variable: "$.x", NumericLessThanEqualsPath: "$.max" }, "$.x <= $.max"],
    [{ Variable: "$.s", StringEquals: "a" }, '$.s == "a"'],
    [
      { Variable: "$.t", TimestampGreaterThanEquals: "2024-01-01T00:00:00Z" },
      '$.t >= "2024-01-01T00:00:00Z"',
    ],
    [{ Variable: "$.s", StringMatches: "log-*" }, '$.s matches "log-*"'],
    [{ Variable: "$.n", IsNull: false }, "$.n is not null"],
    [{ Variable: "$.p", IsPresent: false }, "$.p is absent"],
    [{ Variable: "$.p", IsNumeric: true }, "$.p is numeric"],
    [
      {
        Or: [
          { Variable: "$.a", NumericEquals: 1 },
          {
            And: [
              { Variable: "$.b", BooleanEquals: true },
              { Variable: "$.c", IsString: true },
            ],
          },
        ],
      },
      "$.a == 1 || ($.b == true && $.c is string)",
    ],
    [{ Condition: "{% $states.input.x > 3 %}" }, "$states.input.x > 3"],
  ])("%j → %s", (rule, label) => {
    expect(choiceLabel(rule)).toBe(label);
  });
});

describe("layoutGraph", () => {
  const layout = layoutGraph(definitionGraph(definition));
  const byName = new Map(layout.states.map((s) => [s.name, s]));
  const inside = (inner: string, outer: string) => {
    const i = byName.get(inner)!;
    const o = byName.get(outer)!;
    return (
      i.x >= o.x && i.y >= o.y && i.x + i.width <= o.x + o.width && i.y + i.height <= o.y + o.height
    );
  };

  it("places every state once, nested states inside their Parallel or Map box", () => {
    expect(layout.states).toHaveLength(9);
    expect(
      layout.states
        .filter((s) => s.compound)
        .map((s) => s.name)
        .sort(),
    ).toEqual(["Fan", "Items"]);
    expect(["A", "B1", "B2"].every((n) => inside(n, "Fan"))).toBe(true);
    expect(inside("Work", "Items")).toBe(true);
    expect(inside("Work", "Fan")).toBe(false);
  });

  it("keeps everything within the drawing and gives every edge a route", () => {
    for (const s of layout.states) {
      expect(s.x).toBeGreaterThanOrEqual(0);
      expect(s.y).toBeGreaterThanOrEqual(0);
      expect(s.x + s.width).toBeLessThanOrEqual(layout.width);
      expect(s.y + s.height).toBeLessThanOrEqual(layout.height);
    }
    expect(layout.edges.every((e) => e.points.length >= 2)).toBe(true);
    expect(layout.edges.filter((e) => e.label !== undefined).every((e) => e.labelAt)).toBe(true);
  });

  it("draws the flow top to bottom: a state's successor sits below it", () => {
    expect(byName.get("Check")!.y).toBeLessThan(byName.get("Fan")!.y);
    expect(byName.get("Fan")!.y).toBeLessThan(byName.get("Items")!.y);
    expect(byName.get("B1")!.y).toBeLessThan(byName.get("B2")!.y);
  });
});

/** Whether segment a→b passes through the inside of a box (its border excluded). */
function crosses(a: Point, b: Point, r: LaidState): boolean {
  const [x0, y0, x1, y1] = [r.x + 1, r.y + 1, r.x + r.width - 1, r.y + r.height - 1];
  let t0 = 0;
  let t1 = 1;
  const dx = b.x - a.x;
  const dy = b.y - a.y;
  for (const [p, q] of [
    [-dx, a.x - x0],
    [dx, x1 - a.x],
    [-dy, a.y - y0],
    [dy, y1 - a.y],
  ] as const) {
    if (p === 0) {
      if (q < 0) return false;
      continue;
    }
    const t = q / p;
    if (p < 0) {
      if (t > t1) return false;
      t0 = Math.max(t0, t);
    } else {
      if (t < t0) return false;
      t1 = Math.min(t1, t);
    }
  }
  return true;
}

describe("layout: edges, labels and Retry", () => {
  const withRetry = {
    StartAt: "Charge",
    States: {
      Charge: {
        Type: "Task",
        Resource: "arn:aws:states:::lambda:invoke",
        Retry: [{ ErrorEquals: ["States.Timeout"], MaxAttempts: 4, BackoffRate: 2 }],
        Catch: [
          {
            ErrorEquals: [
              "Stepwise.ApprovalRejected",
              "Stepwise.ApprovalExpired",
              "States.Timeout",
            ],
            Next: "Refund",
          },
        ],
        Next: "Ship",
      },
      Ship: { Type: "Pass", End: true },
      Refund: { Type: "Pass", End: true },
    },
  };

  it("routes no edge through a state it does not join", () => {
    for (const def of [definition, withRetry]) {
      const layout = layoutGraph(definitionGraph(def));
      for (const edge of layout.edges) {
        for (const state of layout.states) {
          if (state.id === edge.from || state.id === edge.to) continue;
          // An edge of a nested scope runs inside its Parallel or Map box, as it should.
          if (edge.from.startsWith(`${state.id}/`) || edge.to.startsWith(`${state.id}/`)) continue;
          for (let i = 0; i + 1 < edge.points.length; i++) {
            expect(
              crosses(edge.points[i]!, edge.points[i + 1]!, state),
              `${edge.from} → ${edge.to} through ${state.id}`,
            ).toBe(false);
          }
        }
      }
    }
  });

  it("wraps a long Catch label whole instead of cutting it, and marks a state's Retry", () => {
    const layout = layoutGraph(definitionGraph(withRetry));
    const caught = layout.edges.find((e) => e.kind === "catch")!;
    expect(caught.labelLines!.join(" ")).toBe(
      "Stepwise.ApprovalRejected, Stepwise.ApprovalExpired, States.Timeout",
    );
    expect(caught.labelLines!.length).toBeGreaterThan(1);
    expect(layout.states.find((s) => s.name === "Charge")!.retry).toBe(
      "States.Timeout ×4, backoff 2",
    );
    expect(layout.states.find((s) => s.name === "Ship")!.retry).toBeUndefined();
    expect(wrapLabel("a".repeat(200)).length).toBe(4);
  });
});
