import { describe, expect, it } from "vitest";
import type { StateMachineDefinition } from "../../engine/core/definition.js";
import { isPayloadRef, type PayloadPolicy } from "../../engine/core/payload-ref.js";
import type { Json } from "../../engine/core/json.js";
import { execute, ofType } from "./helpers.js";

// Large payloads by reference (engine/core/payload-ref.ts), on the in-memory driver.
const POLICY: PayloadPolicy = { refOverBytes: 4096, resolveMaxBytes: 1_000_000 };
const document = { title: "Report", body: "b".repeat(20_000), tags: ["x", "y"] };

/** A Task whose mocked result is `document`, then states that pass it on and read into it. */
function machine(language: "JSONPath" | "JSONata"): StateMachineDefinition {
  if (language === "JSONPath") {
    return {
      StartAt: "Fetch",
      States: {
        Fetch: { Type: "Task", Resource: "fetch", ResultPath: "$.doc", Next: "Read" },
        Read: {
          Type: "Pass",
          Parameters: {
            "title.$": "$.doc.title",
            "firstTag.$": "$.doc.tags[0]",
            "same.$": "$.doc",
            "size.$": "$.doc.size",
            "json.$": "States.JsonToString($.doc.tags)",
          },
          End: true,
        },
      },
    };
  }
  return {
    QueryLanguage: "JSONata",
    StartAt: "Fetch",
    States: {
      Fetch: {
        Type: "Task",
        Resource: "fetch",
        Output: { doc: "{% $states.result %}", title: "{% $states.result.title %}" },
        Next: "Read",
      },
      Read: {
        Type: "Pass",
        Output: {
          title: "{% $states.input.doc.title %}",
          firstTag: "{% $states.input.doc.tags[0] %}",
          same: "{% $states.input.doc %}",
          length: "{% $length($states.input.doc.body) %}",
        },
        End: true,
      },
    },
  };
}

describe("payloads by reference", () => {
  for (const language of ["JSONPath", "JSONata"] as const) {
    it(`passes a large task result on as a reference, and reads into it (${language})`, async () => {
      const r = await execute(machine(language), {
        payloads: POLICY,
        tasks: { fetch: () => document as unknown as Json },
      });
      expect(r.status).toBe("SUCCEEDED");
      const output = r.output as Record<string, Json>;
      expect(output.title).toBe("Report");
      expect(output.firstTag).toBe("x");
      // Passed on, not read into: still the reference, small.
      expect(isPayloadRef(output.same)).toBe(true);
      const ref = output.same as unknown as { $ref: string; size: number; preview: string };
      expect(ref.size).toBe(JSON.stringify(document).length);
      expect(ref.preview).toBe(JSON.stringify(document).slice(0, 1024));
      if (language === "JSONPath") {
        expect(output.size).toBe(ref.size);
        expect(output.json).toBe('["x","y"]');
      } else {
        expect(output.length).toBe(20_000);
      }
      // The history keeps the reference, not 20 KB per event.
      for (const event of r.history) expect(JSON.stringify(event).length).toBeLessThan(4096);
      expect(ofType(r.history, "TaskSucceeded")).toHaveLength(1);
    });
  }

  it("without the policy, the same result is carried whole (as on AWS)", async () => {
    const r = await execute(
      {
        StartAt: "Fetch",
        States: { Fetch: { Type: "Task", Resource: "fetch", ResultPath: "$.doc", End: true } },
      },
      { tasks: { fetch: () => document as unknown as Json } },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual({ doc: document });
  });

  it("a reference larger than a read may load fails the read with States.DataLimitExceeded", async () => {
    const r = await execute(machine("JSONPath"), {
      payloads: { refOverBytes: 4096, resolveMaxBytes: 10_000 },
      tasks: { fetch: () => document as unknown as Json },
    });
    expect(r).toMatchObject({ status: "FAILED", error: "States.DataLimitExceeded" });
    expect(r.cause).toContain("STEPWISE_PAYLOAD_RESOLVE_MAX_BYTES");
  });

  it("a state output over the threshold leaves the state as a reference", async () => {
    const r = await execute(
      {
        StartAt: "Grow",
        States: {
          Grow: {
            Type: "Pass",
            Parameters: { "big.$": "States.ArrayRange(100000, 100999, 1)" },
            Next: "Count",
          },
          Count: {
            Type: "Pass",
            Parameters: { "n.$": "States.ArrayLength($.big)" },
            End: true,
          },
        },
      },
      { payloads: POLICY },
    );
    expect(r.status).toBe("SUCCEEDED");
    expect(r.output).toEqual({ n: 1000 });
    const exited = ofType(r.history, "PassStateExited")[0]!;
    expect(JSON.parse(exited.stateExitedEventDetails!.output as string).$ref).toMatch(
      /^stepwise:payload:[0-9a-f]{64}$/,
    );
  });
});
