import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../engine/core/json.js";
import { validateDefinition } from "../../schema/index.js";
import { END, LAMBDA, machine } from "./fixtures.js";

/**
 * A transition that names no state is reported once, with the name it most likely
 * meant when one is close, and nothing that follows only from it: no unreachable
 * state, no loop without a way out, no scope without a terminal state.
 */
const pass = (next?: string): JsonObject =>
  next ? { Type: "Pass", Next: next } : { Type: "Pass", End: true };

const only = (definition: JsonObject) => {
  const result = validateDefinition(definition);
  expect(result.valid).toBe(false);
  expect(result.diagnostics, JSON.stringify(result.diagnostics, null, 2)).toHaveLength(1);
  return result.diagnostics[0]!;
};

describe("a transition to a state that does not exist", () => {
  it.each<[string, JsonObject, string, string]>([
    [
      "Next",
      machine({ Start: pass("Proces"), Process: pass() }),
      "/States/Start/Next",
      "Next 'Proces' names no state at the top level; did you mean 'Process'? (states here: Start, Process)",
    ],
    [
      "StartAt",
      { StartAt: "Chekc", States: { Check: pass() } },
      "/StartAt",
      "StartAt 'Chekc' names no state at the top level; did you mean 'Check'? (states here: Check)",
    ],
    [
      "Default",
      machine({
        Route: {
          Type: "Choice",
          Choices: [{ Variable: "$.x", IsPresent: true, Next: "Approve" }],
          Default: "Rejectt",
        },
        Approve: END,
        Reject: { Type: "Fail" },
      }),
      "/States/Route/Default",
      "did you mean 'Reject'?",
    ],
    [
      "a Choice rule's Next",
      machine({
        Route: {
          Type: "Choice",
          Choices: [{ Variable: "$.x", IsPresent: true, Next: "aprove" }],
          Default: "Reject",
        },
        Approve: END,
        Reject: { Type: "Fail" },
      }),
      "/States/Route/Choices/0/Next",
      "did you mean 'Approve'?",
    ],
    [
      "a Catch's Next",
      machine({
        Charge: {
          Type: "Task",
          Resource: LAMBDA,
          Catch: [{ ErrorEquals: ["States.ALL"], Next: "HandleFailure" }],
          End: true,
        },
        HandleFailures: { Type: "Fail" },
      }),
      "/States/Charge/Catch/0/Next",
      "did you mean 'HandleFailures'?",
    ],
    [
      "Next in a branch",
      machine({
        P: {
          Type: "Parallel",
          Branches: [{ StartAt: "Fetch", States: { Fetch: pass("Parse"), Parser: pass() } }],
          End: true,
        },
      }),
      "/States/P/Branches/0/States/Fetch/Next",
      "names no state in the branch of state 'P'; did you mean 'Parser'?",
    ],
  ])("%s: one diagnostic, suggesting the close name", (_, definition, path, message) => {
    const d = only(definition);
    expect(d.path).toBe(path);
    expect(d.message).toContain(message);
  });

  it("suggests nothing when no name is close, or two are as close", () => {
    const far = validateDefinition(machine({ A: pass("Nope"), B: pass() }, { StartAt: "A" }));
    const tie = validateDefinition(machine({ Go: pass("Step"), Step1: pass(), Step2: pass() }));
    const short = validateDefinition(machine({ A: pass("C"), B: pass() }, { StartAt: "A" }));
    for (const result of [far, tie, short]) {
      const d = result.diagnostics.find((x) => x.code === "MISSING_TRANSITION_TARGET");
      expect(d?.message).not.toContain("did you mean");
    }
  });

  it("without a close name, the missing state may be the end: no NO_PATH_TO_END, no MISSING_END_STATE", () => {
    const loop = only(
      machine({
        Poll: pass("Check"),
        Check: {
          Type: "Choice",
          Choices: [{ Variable: "$.done", BooleanEquals: false, Next: "Poll" }],
          Default: "Finished",
        },
      }),
    );
    expect(loop).toMatchObject({
      code: "MISSING_TRANSITION_TARGET",
      path: "/States/Check/Default",
    });
    const noEnd = only(machine({ A: pass("B"), B: pass("Finished") }));
    expect(noEnd).toMatchObject({ code: "MISSING_TRANSITION_TARGET", path: "/States/B/Next" });
  });

  it("still reports what does not follow from it", () => {
    // Lonely is reachable from nowhere, whatever 'Proces' was meant to be.
    const unreachable = validateDefinition(
      machine({ Start: pass("Proces"), Process: pass(), Lonely: pass() }),
    );
    expect(unreachable.diagnostics.map((d) => [d.code, d.path])).toEqual([
      ["MISSING_TRANSITION_TARGET", "/States/Start/Next"],
      ["UNREACHABLE_STATE", "/States/Lonely"],
    ]);
    // With the typo mended the machine still loops: that is reported.
    const loop = validateDefinition(machine({ Start: pass("Proces"), Process: pass("Start") }));
    expect(loop.diagnostics.map((d) => d.code)).toEqual([
      "MISSING_TRANSITION_TARGET",
      "MISSING_END_STATE",
    ]);
  });
});
