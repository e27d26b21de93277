import { describe, expect, it } from "vitest";
import type { JsonObject } from "../../engine/core/json.js";
import { validateDefinition } from "../../schema/index.js";

/**
 * A Distributed Map's child workflows see only their own variables (AWS, variable
 * scope; engine/flow/join.ts runs them so): a state inside its ItemProcessor that reads
 * a variable only the parent's states assign is warned about (AWS accepts the
 * definition; the read fails at run time), with the way out: the ItemSelector.
 */
const CODE = "DISTRIBUTED_MAP_OUTER_VARIABLE";

function machine(
  processorState: JsonObject,
  options: {
    language?: "JSONPath" | "JSONata";
    mode?: "DISTRIBUTED" | "INLINE";
    map?: JsonObject;
    inner?: JsonObject;
  } = {},
): JsonObject {
  const language = options.language ?? "JSONPath";
  return {
    QueryLanguage: language,
    StartAt: "Set",
    States: {
      Set: { Type: "Pass", Assign: { bucket: "b-1", prefix: "p" }, Next: "Fan" },
      Fan: {
        Type: "Map",
        ...(language === "JSONPath"
          ? { ItemsPath: "$.items" }
          : { Items: "{% $states.input.items %}" }),
        ItemProcessor: {
          ProcessorConfig:
            options.mode === "INLINE"
              ? { Mode: "INLINE" }
              : { Mode: "DISTRIBUTED", ExecutionType: "STANDARD" },
          StartAt: "Read",
          States: { Read: processorState, ...options.inner },
        },
        End: true,
        ...options.map,
      },
    },
  };
}

const warningsOf = (definition: JsonObject) =>
  validateDefinition(definition).diagnostics.filter((d) => d.code === CODE);

describe("variables read inside a Distributed Map", () => {
  it("warns of a JSONPath read of a variable only the parent assigns, where it is", () => {
    const found = warningsOf(
      machine({
        Type: "Pass",
        Parameters: { "b.$": "$bucket", "key.$": "States.Format('{}/x', $prefix)" },
        End: true,
      }),
    );
    expect(found.map((d) => [d.severity, d.path])).toEqual([
      ["warning", "/States/Fan/ItemProcessor/States/Read/Parameters/key.$"],
      ["warning", "/States/Fan/ItemProcessor/States/Read/Parameters/b.$"],
    ]);
    expect(found[1]!.message).toContain("$bucket");
    expect(found[1]!.message).toContain("'Fan'");
    expect(found[1]!.message).toContain("ItemSelector");
    // A warning: the definition is still valid, as AWS accepts it.
    expect(
      validateDefinition(machine({ Type: "Pass", Parameters: { "b.$": "$bucket" }, End: true }))
        .valid,
    ).toBe(true);
  });

  it("warns of a JSONata read, and of a Choice rule's", () => {
    expect(
      warningsOf(
        machine(
          { Type: "Pass", Output: "{% $bucket & $string(1) %}", End: true },
          {
            language: "JSONata",
          },
        ),
      ).map((d) => d.path),
    ).toEqual(["/States/Fan/ItemProcessor/States/Read/Output"]);
    expect(
      warningsOf(
        machine(
          {
            Type: "Choice",
            Choices: [{ Variable: "$bucket", IsPresent: true, Next: "Done" }],
            Default: "Done",
          },
          { inner: { Done: { Type: "Succeed" } } },
        ),
      ).map((d) => d.path),
    ).toEqual(["/States/Fan/ItemProcessor/States/Read/Choices/0/Variable"]);
  });

  it("says nothing of the ItemSelector, an Inline Map, a variable of its own, or $states", () => {
    const reads = { Type: "Pass", Parameters: { "b.$": "$bucket" }, End: true };
    // The ItemSelector is the parent's: it reads the parent's variables.
    expect(
      warningsOf(
        machine(
          { Type: "Pass", End: true },
          { map: { ItemSelector: { "bucket.$": "$bucket", "item.$": "$$.Map.Item.Value" } } },
        ),
      ),
    ).toEqual([]);
    expect(warningsOf(machine(reads, { mode: "INLINE" }))).toEqual([]);
    // Assigned inside the processor: its own.
    expect(
      warningsOf(
        machine(
          { Type: "Pass", Assign: { bucket: "own" }, Next: "Use" },
          { inner: { Use: reads } },
        ),
      ),
    ).toEqual([]);
    expect(
      warningsOf(
        machine(
          { Type: "Pass", Output: "{% $states.input & ($x := 1; $x) %}", End: true },
          { language: "JSONata" },
        ),
      ),
    ).toEqual([]);
    // Not assigned anywhere: not this warning's business.
    expect(
      warningsOf(machine({ Type: "Pass", Parameters: { "b.$": "$nowhere" }, End: true })),
    ).toEqual([]);
  });
});
